// See markup.hpp.
#include "report/html/markup.hpp"

#include <cmath>

#include <fmt/format.h>

namespace kevo {

std::string escape_html(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string fixed3(const std::optional<double>& v) {
    return v && std::isfinite(*v) ? fmt::format("{:.3f}", *v) : std::string("-");
}

std::string cost_text(double usd) {
    if (!(usd > 0)) return "0";
    return usd >= 0.01 ? fmt::format("{:.4f}", usd) : fmt::format("{:.2g}", usd);
}

std::string speedup_text(const std::optional<double>& v) {
    return v && std::isfinite(*v) ? fmt::format("{:.2f}x", *v) : std::string("-");
}

}  // namespace kevo
