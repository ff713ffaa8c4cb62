// See svg_chart.hpp. One frame (title, plot area, axes, legend) is shared by the four kinds; each
// maps its data through a Scale (linear with 1-2-5 ticks, or log with power-of-two ticks).
#include "report/html/svg_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html/markup.hpp"

namespace kevo {

namespace {

constexpr double kWidth = 740, kHeight = 380;
constexpr double kLeft = 66, kRight = 220, kTop = 36, kBottom = 58;
constexpr double kPlotRight = kWidth - kRight, kPlotBottom = kHeight - kBottom;
constexpr double kStrip = 34;  // the scatter's strip for points apart, below its plot
constexpr size_t kLegendChars = 30;  // "tuner / one-plus-one (n=3)" whole
const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string color(size_t i) { return kPalette[i % std::size(kPalette)]; }
std::string num(double v) { return fmt::format("{:.2f}", v); }
std::string tick_text(double v) { return fmt::format("{:g}", v); }

class Scale {
public:
    Scale(std::vector<double> values, bool log, bool zero_based, double p0, double p1) : log_(log), p0_(p0), p1_(p1) {
        std::erase_if(values, [&](double v) { return !std::isfinite(v) || (log && v <= 0); });
        if (values.empty()) values = {log ? 1.0 : 0.0};
        double lo = *std::min_element(values.begin(), values.end()), hi = *std::max_element(values.begin(), values.end());
        if (log) {
            lo = std::exp2(std::floor(std::log2(lo)));
            hi = std::exp2(std::ceil(std::log2(hi)));
            if (lo == hi) lo /= 2, hi *= 2;
        } else {
            if (zero_based) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
            if (lo == hi) hi = lo + (lo == 0 ? 1 : std::abs(lo));
            step_ = nice_step((hi - lo) / 5);
            lo = std::floor(lo / step_) * step_;
            hi = std::ceil(hi / step_) * step_;
        }
        lo_ = lo, hi_ = hi;
    }
    double operator()(double v) const {
        const double t = log_ ? (std::log2(v) - std::log2(lo_)) / (std::log2(hi_) - std::log2(lo_)) : (v - lo_) / (hi_ - lo_);
        return p0_ + t * (p1_ - p0_);
    }
    std::vector<double> ticks() const {
        std::vector<double> out;
        if (log_) {
            const int k0 = static_cast<int>(std::lround(std::log2(lo_))), k1 = static_cast<int>(std::lround(std::log2(hi_)));
            const int every = std::max(1, (k1 - k0 + 7) / 8);
            for (int k = k0; k <= k1; k += every) out.push_back(std::exp2(k));
        } else {
            for (double v = lo_; v <= hi_ + step_ / 2; v += step_) out.push_back(std::abs(v) < step_ / 1e6 ? 0 : v);
        }
        return out;
    }
    double lo() const { return lo_; }
    double hi() const { return hi_; }

private:
    static double nice_step(double raw) {
        const double mag = std::pow(10, std::floor(std::log10(raw)));
        for (double m : {1.0, 2.0, 5.0})
            if (raw <= m * mag) return m * mag;
        return 10 * mag;
    }
    bool log_;
    double p0_, p1_, lo_ = 0, hi_ = 1, step_ = 1;
};

// A legend entry cut to fit (the whole name is its tooltip); never inside a UTF-8 sequence.
std::string short_name(const std::string& name) {
    if (name.size() <= kLegendChars) return name;
    size_t cut = kLegendChars - 1;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    return name.substr(0, cut) + "~";
}

// The figure's opening: the svg element, its title and the plot's frame.
std::string open_figure(const std::string& title, const std::string& kind, double height = kHeight) {
    return fmt::format(
        "<svg class=\"figure\" data-kind=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
        "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" role=\"img\" aria-label=\"{}\">\n"
        "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n"
        "<text class=\"title\" x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        kind, kWidth, height, kWidth, height, escape_html(title), kWidth, height, kLeft, escape_html(title));
}

std::string y_axis(const Scale& y, const Axis& axis, double right = kPlotRight) {
    std::string out = fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>\n", kLeft,
                                  kTop, kLeft, kPlotBottom);
    for (double t : y.ticks()) {
        const double py = y(t);
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#ddd\"/>"
                           "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n",
                           kLeft, num(py), num(right), num(py), kLeft - 5, num(py + 4), tick_text(t));
    }
    out += fmt::format("<text x=\"16\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 {})\">{}</text>\n",
                       num((kTop + kPlotBottom) / 2), num((kTop + kPlotBottom) / 2), escape_html(axis.label));
    return out;
}

std::string x_label(const Axis& axis, double bottom) {
    return fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                       num((kLeft + kPlotRight) / 2), bottom + 36, escape_html(axis.label));
}

std::string x_axis(const Scale& x, const Axis& axis, double bottom = kPlotBottom, double right = kPlotRight) {
    std::string out = fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>\n", kLeft,
                                  bottom, num(right), bottom);
    for (double t : x.ticks()) {
        const double px = x(t);
        out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>"
                           "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                           num(px), bottom, num(px), bottom + 4, num(px), bottom + 16, tick_text(t));
    }
    out += x_label(axis, bottom);
    return out;
}

std::string legend(const std::vector<std::string>& names, const std::vector<std::string>& colors) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        const double y = kTop + 6 + 18 * static_cast<double>(i);
        out += fmt::format("<g class=\"legend\"><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                           "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text></g>\n",
                           escape_html(names[i]), kPlotRight + 14, num(y), colors[i], kPlotRight + 32, num(y + 10),
                           escape_html(short_name(names[i])));
    }
    return out;
}

std::vector<std::string> palette_colors(size_t n) {
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) out.push_back(color(i));
    return out;
}

std::string empty_note(bool empty) {
    return empty ? fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n",
                               num((kLeft + kPlotRight) / 2), num((kTop + kPlotBottom) / 2))
                 : std::string();
}

}  // namespace

std::string render_line_chart(const LineChart& c) {
    std::vector<double> xs, ys;
    for (const auto& s : c.series)
        for (const auto& [x, y] : s.points) xs.push_back(x), ys.push_back(y);
    const Scale x(xs, c.x.log, false, kLeft, kPlotRight), y(ys, c.y.log, !c.y.log, kPlotBottom, kTop);
    std::string out = open_figure(c.title, "line") + y_axis(y, c.y) + x_axis(x, c.x) + empty_note(xs.empty());
    for (size_t i = 0; i < c.series.size(); ++i) {
        const auto& s = c.series[i];
        std::string points;
        for (const auto& [px, py] : s.points) points += fmt::format("{}{},{}", points.empty() ? "" : " ", num(x(px)), num(y(py)));
        if (s.points.size() > 1)
            out += fmt::format("<polyline class=\"line\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                               color(i), points);
        for (const auto& [px, py] : s.points)
            out += fmt::format("<circle class=\"mark\" data-series=\"{}\" data-x=\"{:g}\" data-y=\"{:g}\" cx=\"{}\" cy=\"{}\" "
                               "r=\"3\" fill=\"{}\"><title>{}: {:g} at {:g}</title></circle>\n",
                               escape_html(s.name), px, py, num(x(px)), num(y(py)), color(i), escape_html(s.name), py, px);
    }
    std::vector<std::string> names;
    for (const auto& s : c.series) names.push_back(s.name);
    return out + legend(names, palette_colors(names.size())) + "</svg>\n";
}

std::string render_scatter_chart(const ScatterChart& c) {
    std::vector<double> values;
    for (const auto& p : c.points) {
        values.push_back(p.x);
        if (!p.apart) values.push_back(p.y);
    }
    // One scale for both axes, so that the diagonal runs corner to corner.
    const double plot_size = kPlotBottom - kTop;
    const Scale x(values, c.x.log, false, kLeft, kLeft + plot_size), y(values, c.y.log, false, kPlotBottom, kTop);
    const double strip_top = kPlotBottom + 4, strip_mid = strip_top + kStrip / 2;
    const double bottom = kPlotBottom + kStrip + 8;
    std::string out = open_figure(c.title, "scatter", kHeight + kStrip + 8) + y_axis(y, c.y, kLeft + plot_size);
    // The x axis under the strip: its ticks serve both the plot and the strip.
    out += fmt::format("<rect class=\"strip\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbeaea\"/>"
                       "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#a33\">{}</text>\n",
                       kLeft, num(strip_top), num(plot_size), kStrip, kLeft + plot_size + 6, num(strip_mid + 4),
                       escape_html(c.apart_label));
    out += x_axis(x, c.x, bottom, kLeft + plot_size) + empty_note(c.points.empty());
    if (c.diagonal)
        out += fmt::format("<line class=\"diagonal\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\" "
                           "stroke-dasharray=\"5,4\"/>\n",
                           num(x(x.lo())), num(y(y.lo())), num(x(x.hi())), num(y(y.hi())));
    for (const auto& p : c.points) {
        const std::string name = p.series < c.series.size() ? c.series[p.series] : std::string();
        const std::string tip = escape_html(p.label);
        const double px = x(p.x);
        if (p.apart)
            out += fmt::format("<path class=\"mark apart\" data-series=\"{}\" data-label=\"{}\" data-x=\"{:g}\" "
                               "d=\"M{} {} l8 8 m0 -8 l-8 8\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>\n",
                               escape_html(name), tip, p.x, num(px - 4), num(strip_mid - 4), color(p.series), tip);
        else
            out += fmt::format("<circle class=\"mark point\" data-series=\"{}\" data-label=\"{}\" data-x=\"{:g}\" "
                               "data-y=\"{:g}\" cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}</title></circle>\n",
                               escape_html(name), tip, p.x, p.y, num(px), num(y(p.y)), color(p.series), tip);
    }
    return out + legend(c.series, palette_colors(c.series.size())) + "</svg>\n";
}

std::string render_stacked_bars(const StackedBars& c) {
    const size_t n = c.categories.size();
    std::vector<double> totals(n, 0);
    for (const auto& stack : c.values)
        for (size_t j = 0; j < n && j < stack.size(); ++j) totals[j] += stack[j];
    const Scale y(totals, false, true, kPlotBottom, kTop);
    const std::vector<std::string> colors = c.colors.size() == c.stacks.size() ? c.colors : palette_colors(c.stacks.size());
    std::string out = open_figure(c.title, "stacked") + y_axis(y, c.y) + empty_note(n == 0);
    out += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>\n", kLeft,
                       kPlotBottom, kPlotRight, kPlotBottom);
    const double band = (kPlotRight - kLeft) / static_cast<double>(std::max<size_t>(n, 1));
    const size_t label_every = std::max<size_t>(1, (n + 19) / 20);
    for (size_t j = 0; j < n; ++j) {
        const double x0 = kLeft + band * static_cast<double>(j) + band * 0.1;
        double base = 0;
        for (size_t i = 0; i < c.values.size(); ++i) {
            const double v = j < c.values[i].size() ? c.values[i][j] : 0;
            if (v <= 0) continue;
            out += fmt::format("<rect class=\"mark\" data-series=\"{}\" data-category=\"{}\" data-value=\"{:g}\" x=\"{}\" "
                               "y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} {}: {:g}</title></rect>\n",
                               escape_html(c.stacks[i]), escape_html(c.categories[j]), v, num(x0), num(y(base + v)),
                               num(band * 0.8), num(y(base) - y(base + v)), colors[i], escape_html(c.x.label),
                               escape_html(c.categories[j]) + " " + escape_html(c.stacks[i]), v);
            base += v;
        }
        if (j % label_every == 0)
            out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                               num(x0 + band * 0.4), kPlotBottom + 16, escape_html(c.categories[j]));
    }
    out += x_label(c.x, kPlotBottom);
    return out + legend(c.stacks, colors) + "</svg>\n";
}

std::string render_bar_chart(const BarChart& c) {
    const Scale y({0.0, c.y_max}, false, true, kPlotBottom, kTop);
    std::string out = open_figure(c.title, "bars") + y_axis(y, c.y) + empty_note(c.bars.empty());
    out += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>\n", kLeft,
                       kPlotBottom, kPlotRight, kPlotBottom);
    const double band = (kPlotRight - kLeft) / static_cast<double>(std::max<size_t>(c.bars.size(), 1));
    for (size_t i = 0; i < c.bars.size(); ++i) {
        const auto& b = c.bars[i];
        const double x0 = kLeft + band * static_cast<double>(i) + band * 0.2, top = y(std::max(0.0, b.value));
        // A zero bar is still drawn (one pixel), so that it counts as a mark the reader sees.
        out += fmt::format("<rect class=\"mark\" data-series=\"{}\" data-value=\"{:g}\" x=\"{}\" y=\"{}\" width=\"{}\" "
                           "height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>\n"
                           "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n"
                           "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                           escape_html(b.label), b.value, num(x0), num(std::min(top, kPlotBottom - 1)), num(band * 0.6),
                           num(std::max(1.0, kPlotBottom - top)), color(i), escape_html(b.label), escape_html(b.value_text),
                           num(x0 + band * 0.3), num(std::min(top, kPlotBottom - 1) - 5), escape_html(b.value_text),
                           num(x0 + band * 0.3), kPlotBottom + 16, escape_html(b.label));
    }
    return out + "</svg>\n";
}

}  // namespace kevo
