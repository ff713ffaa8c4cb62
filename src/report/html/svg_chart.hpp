// Inline SVG figures for the study report: a line chart, a scatter plot with the diagonal, stacked
// bars and plain bars, each with axes, ticks, a title and a legend. Every plotted datum is an
// element of class "mark" (its series and label in data- attributes), so that a browser check can
// count what was drawn; every text is escaped. Output depends only on the input (no clocks, ids).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kevo {

struct Axis {
    std::string label;
    bool log = false;  // log scale (ticks at powers of two); values must be positive
};

struct LineSeries {
    std::string name;
    std::vector<std::pair<double, double>> points;  // (x, y), by x
};

struct LineChart {
    std::string title;
    Axis x, y;
    std::vector<LineSeries> series;
};

struct ScatterPoint {
    double x = 0, y = 0;
    size_t series = 0;   // index into ScatterChart::series
    std::string tag;     // the short text drawn beside the mark (e.g. its task), in data-tag
    std::string label;   // shown on hover (<title>) and in data-label
    bool apart = false;  // drawn in the strip below the plot (y has no meaning), x still placed
};

// A scatter's series differ in colour and in marker shape (legend alike). Marks that would cover
// each other (centres a few pixels apart, e.g. two groups at (1, 1)) are drawn spread around their
// common place, each still at data-x/data-y, so that every one stays visible; the caption should
// say so.

struct ScatterChart {
    std::string title;
    Axis x, y;
    std::vector<std::string> series;
    std::vector<ScatterPoint> points;
    bool diagonal = true;      // y = x
    std::string apart_label;   // the strip's caption
};

struct StackedBars {
    std::string title;
    Axis x, y;
    std::vector<std::string> categories;        // along x
    std::vector<std::string> stacks;            // legend, bottom first
    std::vector<std::vector<double>> values;    // [stack][category]
    std::vector<std::string> colors;            // per stack (CSS colours); empty: the palette
};

struct Bar {
    std::string label, value_text;
    double value = 0;
};

struct BarChart {
    std::string title;
    Axis y;
    double y_max = 1;
    std::vector<Bar> bars;
};

std::string render_line_chart(const LineChart& chart);
std::string render_scatter_chart(const ScatterChart& chart);
std::string render_stacked_bars(const StackedBars& chart);
std::string render_bar_chart(const BarChart& chart);

}  // namespace kevo
