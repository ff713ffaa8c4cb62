// HTML and SVG text helpers: escaping of every stored string that reaches the page (sources, notes,
// task and model names can hold anything), and the number formats the page uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kevo {

// Escapes & < > " ' so that the text is safe as element content and as a quoted attribute value.
std::string escape_html(std::string_view text);

// "1.234" (three decimals); "-" when absent or not finite.
std::string fixed3(const std::optional<double>& value);
// "1.23x"; "-" when absent or not finite.
std::string speedup_text(const std::optional<double>& value);
// USD: "0" for none, "0.0123" from a cent up, two significant digits below ("1.2e-05"), so that a
// cheap model's cost does not read as zero.
std::string cost_text(double usd);

}  // namespace kevo
