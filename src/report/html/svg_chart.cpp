// See svg_chart.hpp. One frame (title, plot area, axes, legend) is shared by the four kinds; each
// maps its data through a Scale (linear with 1-2-5 ticks, or log with power-of-two ticks).
#include "report/html/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>

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

// A scatter series' marker, centred on (0, 0) (its mark is translated into place): circle, square,
// triangle, diamond, triangle down; with ten colours, ten series differ in both.
struct Marker {
    const char* name;
    const char* path;
};
constexpr Marker kMarkers[] = {{"circle", "M-5 0a5 5 0 1 0 10 0a5 5 0 1 0 -10 0z"},
                               {"square", "M-4.5 -4.5h9v9h-9z"},
                               {"triangle", "M0 -6l5.5 9.5h-11z"},
                               {"diamond", "M0 -6l6 6l-6 6l-6 -6z"},
                               {"triangle-down", "M0 6l5.5 -9.5h-11z"}};

const Marker& marker_of(size_t series) { return kMarkers[series % std::size(kMarkers)]; }

// The swatch of a legend entry at (x, y), its top left corner: a square, or the series' marker.
std::string swatch(double x, double y, const std::string& fill, std::optional<size_t> marker) {
    if (!marker) return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>", x, num(y), fill);
    return fmt::format("<path transform=\"translate({} {})\" d=\"{}\" fill=\"{}\" stroke=\"#fff\"/>", x + 6, num(y + 6),
                       marker_of(*marker).path, fill);
}

std::string legend(const std::vector<std::string>& names, const std::vector<std::string>& colors, bool markers = false) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        const double y = kTop + 6 + 18 * static_cast<double>(i);
        out += fmt::format("<g class=\"legend\"><title>{}</title>{}<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text></g>\n",
                           escape_html(names[i]), swatch(kPlotRight + 14, y, colors[i], markers ? std::optional(i) : std::nullopt),
                           kPlotRight + 32, num(y + 10), escape_html(short_name(names[i])));
    }
    return out;
}

// Marks closer than this (pixels, centre to centre) would cover each other: they form a cluster,
// drawn spread around its first mark's place.
constexpr double kNear = 9;

struct Cluster {
    double x = 0, y = 0;          // where its first mark belongs (moved inside the frame when spread)
    bool apart = false;
    std::vector<size_t> members;  // indices into the chart's points, in order
};

// Greedy and in input order, so that the same points always give the same picture.
std::vector<Cluster> clusters_of(const std::vector<std::pair<double, double>>& at, const std::vector<ScatterPoint>& points) {
    std::vector<Cluster> out;
    for (size_t i = 0; i < at.size(); ++i) {
        auto near = std::find_if(out.begin(), out.end(), [&](const Cluster& c) {
            return c.apart == points[i].apart && std::hypot(c.x - at[i].first, c.y - at[i].second) < kNear;
        });
        if (near == out.end()) near = out.insert(out.end(), Cluster{at[i].first, at[i].second, points[i].apart, {}});
        near->members.push_back(i);
    }
    return out;
}

// Member k's offset from its cluster's place: around a ring in the plot (wide enough that
// neighbours do not touch), along a line in the strip (which is one mark high).
std::pair<double, double> spread(const Cluster& c, size_t k) {
    const size_t m = c.members.size();
    if (m == 1) return {0, 0};
    if (c.apart) return {(static_cast<double>(k) - static_cast<double>(m - 1) / 2) * 12, 0};
    const double r = std::max(7.0, 6.5 / std::sin(std::numbers::pi / static_cast<double>(m)));
    const double angle = std::numbers::pi + 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(m);
    return {r * std::cos(angle), r * std::sin(angle)};
}

// A spread cluster is moved inside the frame (x0..x1, y0..y1) when its ring would cross it, so that
// no mark hides behind an axis or its tick labels.
void keep_inside(Cluster& c, double x0, double x1, double y0, double y1) {
    const size_t m = c.members.size();
    if (m == 1) return;
    const double rx = c.apart ? static_cast<double>(m - 1) * 6 + 6 : std::abs(spread(c, 0).first) + 6, ry = c.apart ? 0 : rx;
    c.x = std::clamp(c.x, x0 + rx, std::max(x0 + rx, x1 - rx));
    c.y = std::clamp(c.y, y0 + ry, std::max(y0 + ry, y1 - ry));
}

// How far right of its cluster's place the cluster's labels start.
double label_offset(const Cluster& c) {
    const size_t m = c.members.size();
    if (m == 1) return 9;
    return c.apart ? static_cast<double>(m - 1) * 6 + 9 : spread(c, 0).first * -1 + 9;
}

// The cluster's tags beside it, each once, stacked in the marks' order: in its mark's colour when
// one mark carries it, in grey when several do (two models on one task).
std::string cluster_labels(const Cluster& c, const std::vector<ScatterPoint>& points) {
    std::vector<size_t> shown;
    std::map<std::string, int> carried;
    for (size_t i : c.members) {
        if (points[i].tag.empty()) continue;
        if (carried[points[i].tag]++ == 0) shown.push_back(i);
    }
    const double step = c.apart ? 10 : 12, x = c.x + label_offset(c);
    std::string out;
    for (size_t k = 0; k < shown.size(); ++k) {
        const ScatterPoint& p = points[shown[k]];
        const double y = c.y + 4 + (static_cast<double>(k) - static_cast<double>(shown.size() - 1) / 2) * step;
        out += fmt::format("<text class=\"point-label\" data-tag=\"{}\" x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\">{}</text>\n",
                           escape_html(p.tag), num(x), num(y), c.apart ? 10 : 11, carried[p.tag] > 1 ? "#333" : color(p.series),
                           escape_html(p.tag));
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
    // Padded by 5% each way, so that a point at a round value (1x, the seed's speed) is drawn inside the
    // frame, not on an axis.
    std::vector<double> values;
    const auto pad = [&](double v) {
        values.push_back(c.x.log ? v / 1.05 : v - 0.05 * std::abs(v));
        values.push_back(c.x.log ? v * 1.05 : v + 0.05 * std::abs(v));
    };
    for (const auto& p : c.points) {
        pad(p.x);
        if (!p.apart) pad(p.y);
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
    std::vector<std::pair<double, double>> at;
    for (const auto& p : c.points) at.emplace_back(x(p.x), p.apart ? strip_mid : y(p.y));
    std::vector<Cluster> clusters = clusters_of(at, c.points);
    for (Cluster& cluster : clusters)
        if (cluster.apart) keep_inside(cluster, kLeft, kLeft + plot_size, strip_mid, strip_mid);
        else keep_inside(cluster, kLeft, kLeft + plot_size, kTop, kPlotBottom);
    for (const Cluster& cluster : clusters) {
        for (size_t k = 0; k < cluster.members.size(); ++k) {
            const ScatterPoint& p = c.points[cluster.members[k]];
            const std::string name = p.series < c.series.size() ? c.series[p.series] : std::string();
            const std::string tip = escape_html(p.label);
            // A mark alone stands where it belongs; one with company around the cluster's place.
            const auto [dx, dy] = spread(cluster, k);
            const auto [px, py] = cluster.members.size() > 1 ? std::pair{cluster.x, cluster.y} : at[cluster.members[k]];
            const std::string common = fmt::format(
                "data-series=\"{}\" data-tag=\"{}\" data-label=\"{}\" data-x=\"{:g}\" data-spread=\"{}\" "
                "transform=\"translate({} {})\"",
                escape_html(name), escape_html(p.tag), tip, p.x, cluster.members.size() > 1 ? "yes" : "no", num(px + dx),
                num(py + dy));
            if (p.apart)
                out += fmt::format("<path class=\"mark apart\" {} d=\"M-4 -4l8 8m0 -8l-8 8\" stroke=\"{}\" stroke-width=\"2\">"
                                   "<title>{}</title></path>\n",
                                   common, color(p.series), tip);
            else
                out += fmt::format("<path class=\"mark point\" {} data-y=\"{:g}\" data-shape=\"{}\" d=\"{}\" fill=\"{}\" "
                                   "fill-opacity=\"0.85\" stroke=\"#fff\" stroke-width=\"1\"><title>{}</title></path>\n",
                                   common, p.y, marker_of(p.series).name, marker_of(p.series).path, color(p.series), tip);
        }
        out += cluster_labels(cluster, c.points);
    }
    return out + legend(c.series, palette_colors(c.series.size()), true) + "</svg>\n";
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
