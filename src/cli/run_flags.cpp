// See run_flags.hpp.
#include "cli/run_flags.hpp"

#include "cli/common.hpp"
#include "search/options.hpp"

namespace kevo::cli {
namespace {

// `check`, or the word "none".
CLI::Validator or_none(CLI::Validator check) {
    const std::string description = check.get_description() + " or none";
    return CLI::Validator(
        [check](std::string& text) {
            if (text == "none") return std::string();
            const std::string error = check(text);
            return error.empty() ? error : error + " (give a number, or none to send none)";
        },
        description);
}

// The check of the option's type and range (the study file's is read_option_value: the same bounds).
std::optional<CLI::Validator> check_of(const RunOption& o) {
    switch (o.type) {
        case OptionType::integer: return whole_range(static_cast<long long>(o.lo), static_cast<long long>(o.hi));
        case OptionType::number: return finite_range(o.lo, o.hi);
        case OptionType::integer_or_none:
            return or_none(whole_range(static_cast<long long>(o.lo), static_cast<long long>(o.hi)));
        case OptionType::number_or_none: return or_none(finite_range(o.lo, o.hi));
        case OptionType::word: return CLI::IsMember(o.words);
        case OptionType::text:
        case OptionType::path:
        case OptionType::flag: break;
    }
    return std::nullopt;
}

}  // namespace

void add_run_flags(CLI::App& cmd, RunFlags& flags) {
    for (const RunOption& o : run_option_table()) {
        if (o.flag.empty()) continue;
        if (o.type == OptionType::flag) {
            // --no-X exists so that a resume can switch a stored --X off (both count as given).
            bool& on = flags.on[o.name] = o.fallback.is_boolean() && o.fallback.get<bool>();
            flags.declared[o.name] = cmd.add_flag(o.flag + ",!--no-" + o.flag.substr(2), on, o.help);
            continue;
        }
        std::string& text = flags.text[o.name];
        CLI::Option* option = cmd.add_option(o.flag, text, o.help);
        if (!o.fallback.is_null()) option->default_str(value_text(o.fallback));
        if (auto check = check_of(o)) option->check(*check);
        option->type_name(o.type == OptionType::integer ? "INT" : o.type == OptionType::number ? "FLOAT" : "TEXT");
        flags.declared[o.name] = option;
    }
}

std::set<std::string> given_options(const RunFlags& flags) {
    std::set<std::string> given;
    for (const auto& [name, option] : flags.declared)
        if (option->count() > 0) given.insert(name);
    return given;
}

nlohmann::json option_values(const RunFlags& flags) {
    nlohmann::json values = nlohmann::json::object();
    for (const RunOption& o : run_option_table()) {
        values[o.name] = o.fallback;
        const auto declared = flags.declared.find(o.name);
        if (declared == flags.declared.end() || declared->second->count() == 0) continue;
        if (o.type == OptionType::flag) {
            values[o.name] = flags.on.at(o.name);
        } else if (o.type == OptionType::text || o.type == OptionType::path) {
            values[o.name] = flags.text.at(o.name);  // as given, even empty (the part that reads it says what it needs)
        } else {
            // The flag's check accepted it, so it reads.
            values[o.name] = read_option_value(o, flags.text.at(o.name)).value_or(nlohmann::json());
        }
    }
    return values;
}

}  // namespace kevo::cli
