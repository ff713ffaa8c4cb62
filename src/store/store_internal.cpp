// See store_internal.hpp.
#include "store/store_internal.hpp"

#include <fmt/format.h>

namespace kevo::store_internal {

std::optional<std::string> json_text(const nlohmann::json& value) {
    if (value.is_null()) return std::nullopt;
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Expected<nlohmann::json> parse_json_column(const Statement& stmt, int column, const std::string& path,
                                           std::string_view what) {
    if (stmt.is_null(column)) return nlohmann::json();
    nlohmann::json value = nlohmann::json::parse(stmt.text(column), nullptr, false);
    if (value.is_discarded()) return make_error(fmt::format("{}: {} is not valid JSON", path, what));
    return value;
}

}  // namespace kevo::store_internal
