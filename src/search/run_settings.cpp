// See run_settings.hpp.
#include "search/run_settings.hpp"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/registry.hpp"
#include "core/clock.hpp"
#include "search/proposers/registry.hpp"

namespace kevo {
namespace {

nlohmann::json value_or_default(const nlohmann::json& values, const RunOption& option) {
    const auto it = values.find(option.name);
    return it != values.end() ? *it : option.fallback;
}

std::string refusal(const std::string& run_id, const std::string& flag, const std::string& detail) {
    std::vector<std::string> extends, reconnects;
    for (const auto& o : run_option_table()) {
        if (o.flag.empty()) continue;
        if (o.resume == ResumeRule::extends) extends.push_back(o.flag);
        if (o.resume == ResumeRule::reconnects) reconnects.push_back(o.flag);
    }
    std::sort(reconnects.begin(), reconnects.end());
    reconnects.erase(std::unique(reconnects.begin(), reconnects.end()), reconnects.end());
    return fmt::format("--resume {} continues the run with its stored settings, so {} cannot change there{}: drop it to "
                       "resume, or start a new run. A resume may change {} (to search further or longer), and how the "
                       "proposer is reached: {}",
                       run_id, flag, detail, fmt::join(extends, ", "), fmt::join(reconnects, ", "));
}

}  // namespace

nlohmann::json default_option_values() {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& o : run_option_table()) values[o.name] = o.fallback;
    return values;
}

Expected<RunOptions> apply_option_values(RunOptions base, const nlohmann::json& values) {
    nlohmann::json j = base;
    const nlohmann::json strategy = value_or_default(values, *find_run_option("strategy"));
    for (const auto& o : run_option_table()) {
        const nlohmann::json value = value_or_default(values, o);
        switch (o.part) {
            case OptionPart::strategy:
                // (json on both sides: nlohmann 3.11.3 has no string == json under C++20's rewritten comparisons)
                if (strategy == nlohmann::json(o.owner)) j["strategy_options"][o.name] = value;
                break;
            case OptionPart::proposer:
                if (!o.flag.empty()) j["settings"][o.name] = value;  // a study-only key (api_key_env) is not the run's
                break;
            default:
                if (!value.is_null() && !o.stored_as.empty()) j[o.stored_as] = value;
        }
    }
    return run_options_from_json(j);
}

nlohmann::json stored_option_values(const RunOptions& stored) {
    const nlohmann::json j = stored;
    const nlohmann::json settings = stored.settings.is_object() ? stored.settings : nlohmann::json::object();
    nlohmann::json values = nlohmann::json::object();
    for (const auto& o : run_option_table()) {
        switch (o.part) {
            case OptionPart::strategy: values[o.name] = value_or_default(stored.strategy_options, o); break;
            case OptionPart::proposer: values[o.name] = value_or_default(settings, o); break;
            default: values[o.name] = o.stored_as.empty() ? o.fallback : j.value(o.stored_as, o.fallback);
        }
    }
    return values;
}

std::string resume_refusal(const std::string& run_id, const std::string& flag) { return refusal(run_id, flag, ""); }

Expected<void> check_resume_options(const std::string& run_id, const std::set<std::string>& given,
                                    const nlohmann::json& values, const RunOptions& stored) {
    const nlohmann::json before = stored_option_values(stored);
    for (const auto& o : run_option_table()) {
        if (!given.count(o.name) || o.resume != ResumeRule::fixed) continue;
        nlohmann::json now = value_or_default(values, o);
        if (o.name == "backend" && now.is_string())
            if (auto resolved = resolve_backend_name(now.get<std::string>())) now = *resolved;
        if (now != before[o.name])
            return make_error(refusal(run_id, o.flag, fmt::format(" (stored: {}, given: {})", value_text(before[o.name]),
                                                                  value_text(now))));
    }
    return {};
}

RunExtension extended_budgets(const std::set<std::string>& given, const nlohmann::json& values) {
    // RunExtension's fields are the stored fields of the run's budget options (RunOptions).
    RunExtension e;
    for (const auto& o : run_option_table()) {
        if (o.resume != ResumeRule::extends || !given.count(o.name)) continue;
        const nlohmann::json& v = values.at(o.name);
        if (o.stored_as == "iterations") e.iterations = v.get<int>();
        else if (o.stored_as == "max_wall_s") e.max_wall_s = v.get<double>();
        else if (o.stored_as == "max_cost_usd") e.max_cost_usd = v.get<double>();
        else if (o.stored_as == "max_tokens_total") e.max_tokens_total = v.get<int64_t>();
        else if (o.stored_as == "max_proposer_failures") e.max_proposer_failures = v.get<int>();
        else assert(false && "an option a resume extends has a field in RunExtension");
    }
    return e;
}

Expected<nlohmann::json> reconnected_settings(const RunOptions& stored, const std::set<std::string>& given,
                                              const nlohmann::json& values, int from_iteration) {
    nlohmann::json settings = stored.settings.is_object() ? stored.settings : nlohmann::json::object();
    const nlohmann::json before = settings;
    for (const auto& o : run_option_table())
        if (o.part == OptionPart::proposer && !o.flag.empty() && !settings.contains(o.name)) settings[o.name] = o.fallback;
    for (const RunOption* o : options_of(OptionPart::proposer, stored.proposer))
        if (given.count(o->name) && o->resume == ResumeRule::reconnects) settings[o->name] = value_or_default(values, *o);
    if (const ProposerEntry* entry = find_proposer(stored.proposer); entry && entry->settle)
        if (auto ok = entry->settle(settings, given); !ok) return ok.error();
    nlohmann::json changed = nlohmann::json::object();
    for (const RunOption* o : options_of(OptionPart::proposer, stored.proposer)) {
        if (o->flag.empty()) continue;  // a study's key only (api_key_env): never a run's setting
        const nlohmann::json was = value_or_default(before, *o);
        if (settings[o->name] != was) changed[o->name] = {{"from", was}, {"to", settings[o->name]}};
    }
    if (!changed.empty()) {
        nlohmann::json segment = {{"from_iteration", from_iteration}, {"at", utc_now_iso8601()}, {"changed", changed}};
        if (!settings.contains("segments") || !settings["segments"].is_array()) settings["segments"] = nlohmann::json::array();
        settings["segments"].push_back(std::move(segment));
    }
    return settings;
}

std::vector<std::string> rerun_words(const RunOptions& stored) {
    const nlohmann::json values = stored_option_values(stored);
    std::vector<std::string> words;
    for (const auto& o : run_option_table()) {
        if (o.part == OptionPart::strategy && o.owner != stored.strategy) continue;
        if (o.part == OptionPart::proposer && o.owner != stored.proposer) continue;
        const auto w = option_words(o, values[o.name]);
        words.insert(words.end(), w.begin(), w.end());
    }
    return words;
}

}  // namespace kevo
