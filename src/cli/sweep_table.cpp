// See sweep_table.hpp.
#include "cli/sweep_table.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "core/text_table.hpp"

namespace kevo::cli {
namespace {

std::string score(const std::optional<double>& s) { return s ? fmt::format("{:.4f}", *s) : "-"; }
std::string speedup(const std::optional<double>& s) { return s ? fmt::format("{:.3f}x", *s) : "-"; }

std::vector<std::string> row(const CellProgress& c, int iterations) {
    return {c.cell.key,
            cell_status_name(c.status),
            c.status == CellStatus::pending ? "-" : fmt::format("{}/{}", c.iterations_done, iterations),
            speedup(c.gate_speedup),
            speedup(c.gate_heldout_speedup),
            score(c.best_score),
            score(c.seed_score),
            c.cost_usd > 0 ? fmt::format("${:.4f}", c.cost_usd) : "-",
            c.tokens > 0 ? std::to_string(c.tokens) : "-",
            c.note};
}

}  // namespace

std::string sweep_table(const std::vector<CellProgress>& cells, int iterations) {
    using A = TextTable::Align;
    TextTable table({{"cell"}, {"status"}, {"iter", A::right}, {"speed-up (gate)", A::right},
                     {"held out (gate)", A::right}, {"best (search)", A::right}, {"seed (search)", A::right},
                     {"cost", A::right}, {"tokens", A::right}, {"note"}});
    for (const auto& c : cells) table.add_row(row(c, iterations));
    return table.render();
}

void SweepProgress::show(const std::vector<CellProgress>& cells) {
    if (live_) {
        std::string text = sweep_table(cells, iterations_);
        if (!text.empty() && text.back() == '\n') text.pop_back();
        if (drawn_lines_ > 0) std::fprintf(stderr, "\033[%dF", drawn_lines_);  // back to the table's first line
        int lines = 0;
        for (size_t start = 0; start < text.size();) {
            const size_t end = text.find('\n', start);
            const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
            std::fprintf(stderr, "\033[K%s\n", line.c_str());
            ++lines;
            if (end == std::string::npos) break;
            start = end + 1;
        }
        std::fflush(stderr);
        drawn_lines_ = lines;
        return;
    }
    for (size_t i = 0; i < cells.size(); ++i) {
        if (i < previous_.size() && previous_[i] == cells[i]) continue;
        const auto r = row(cells[i], iterations_);
        std::fprintf(stderr, "%s  %s  iter %s  speed-up (gate) %s  held out %s  best (search) %s  seed (search) %s  cost %s  tokens %s%s\n",
                     r[0].c_str(), r[1].c_str(), r[2].c_str(), r[3].c_str(), r[4].c_str(), r[5].c_str(), r[6].c_str(),
                     r[7].c_str(), r[8].c_str(), r[9].empty() ? "" : ("  " + r[9]).c_str());
    }
    std::fflush(stderr);
    previous_ = cells;
}

void SweepProgress::finish() { drawn_lines_ = 0; }

}  // namespace kevo::cli
