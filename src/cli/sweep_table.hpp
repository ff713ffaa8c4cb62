// The sweep's progress table: a row per cell (cell, status, iteration of the budget, the gate's
// speed-ups of the search's best, the search's own best and seed scores, cost, tokens). On a terminal the table is redrawn in place; elsewhere each change of
// a cell is one line, so a log holds the whole story.
#pragma once

#include <string>
#include <vector>

#include "study/sweep.hpp"

namespace kevo::cli {

std::string sweep_table(const std::vector<CellProgress>& cells, int iterations);

class SweepProgress {
public:
    SweepProgress(bool live, int iterations) : live_(live), iterations_(iterations) {}
    void show(const std::vector<CellProgress>& cells);
    // Before other text: the table stays above it (live) or is simply left (lines).
    void finish();

private:
    bool live_;
    int iterations_;
    int drawn_lines_ = 0;                 // live: the lines of the table on screen
    std::vector<CellProgress> previous_;  // lines: the rows last printed
};

}  // namespace kevo::cli
