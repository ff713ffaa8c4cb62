// See study_file.hpp. Two spellings are accepted: the one of docs/study.md (top-level keys,
// [budget], [run], [[models]] with `proposer`) and CLI.md's (a [study] table with the budget in it,
// [[proposer]] with `kind`). A syntax error becomes an Error naming the line (core/toml_parse.hpp).
#include "study/study_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "backend/registry.hpp"
#include "core/files.hpp"
#include "core/toml_parse.hpp"
#include "pack/pack.hpp"
#include "search/options.hpp"
#include "search/proposers/registry.hpp"
#include "search/strategies/registry.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

// Reads the keys of one table, remembering which were read so that the rest are reported as unknown.
class TableReader {
public:
    TableReader(const toml::table& table, std::string where, const std::string& file)
        : table_(table), where_(std::move(where)), file_(file) {}

    const std::string& where() const { return where_; }

    // A key as found: its node (null when absent) and the spelling it was given in.
    struct Found {
        const toml::node* node = nullptr;
        std::string_view name;
    };
    // The first of `names` present (an error when two spellings of one key are given).
    Expected<Found> find(std::initializer_list<std::string_view> names) {
        Found found;
        for (auto name : names) {
            used_.insert(std::string(name));
            if (const toml::node* n = table_.get(name)) {
                if (found.node) return error(n, name, fmt::format("is the same key as {}; give one of them", found.name));
                found = {n, name};
            }
        }
        return found;
    }
    Expected<const toml::node*> take(std::initializer_list<std::string_view> names) {
        auto found = find(names);
        if (!found) return found.error();
        return found->node;
    }

    Expected<std::optional<std::string>> text(std::initializer_list<std::string_view> names) {
        auto f = find(names);
        if (!f) return f.error();
        if (!f->node) return std::optional<std::string>();
        if (!f->node->is_string()) return error(f->node, f->name, "must be a string");
        return std::optional<std::string>(**f->node->as_string());
    }

    Expected<std::optional<int64_t>> integer(std::initializer_list<std::string_view> names, int64_t lo, int64_t hi) {
        auto f = find(names);
        if (!f) return f.error();
        if (!f->node) return std::optional<int64_t>();
        const auto* v = f->node->as_integer();
        if (!v || **v < lo || **v > hi) return error(f->node, f->name, fmt::format("must be an integer from {} to {}", lo, hi));
        return std::optional<int64_t>(**v);
    }

    Expected<std::optional<double>> number(std::initializer_list<std::string_view> names, double lo, double hi) {
        auto f = find(names);
        if (!f) return f.error();
        if (!f->node) return std::optional<double>();
        const auto v = f->node->value<double>();  // integers read as numbers too
        if (!v || !std::isfinite(*v) || *v < lo || *v > hi)
            return error(f->node, f->name, fmt::format("must be a number from {:g} to {:g}", lo, hi));
        return std::optional<double>(*v);
    }

    // A string from `words`.
    Expected<std::optional<std::string>> word(std::string_view name, const std::vector<std::string>& words) {
        auto n = take({name});
        if (!n) return n.error();
        if (!*n) return std::optional<std::string>();
        const auto* s = (*n)->as_string();
        if (!s || std::find(words.begin(), words.end(), **s) == words.end())
            return error(*n, name, fmt::format("must be one of \"{}\"", fmt::join(words, "\", \"")));
        return std::optional<std::string>(**s);
    }

    // A non-empty array of distinct strings.
    Expected<std::optional<std::vector<std::string>>> strings(std::string_view name) {
        auto n = take({name});
        if (!n) return n.error();
        if (!*n) return std::optional<std::vector<std::string>>();
        const toml::array* array = (*n)->as_array();
        if (!array || array->empty()) return error(*n, name, "must be a non-empty array of strings, e.g. [\"a\", \"b\"]");
        std::vector<std::string> out;
        for (const auto& item : *array) {
            if (!item.is_string()) return error(&item, name, "must be a non-empty array of strings, e.g. [\"a\", \"b\"]");
            const std::string s(**item.as_string());
            if (std::find(out.begin(), out.end(), s) != out.end())
                return error(&item, name, fmt::format("names \"{}\" twice", s));
            out.push_back(s);
        }
        return std::optional<std::vector<std::string>>(std::move(out));
    }

    // The table under `name`; null when absent.
    Expected<const toml::table*> table(std::string_view name) {
        auto n = take({name});
        if (!n) return n.error();
        if (!*n) return static_cast<const toml::table*>(nullptr);
        if (!(*n)->is_table()) return error(*n, name, fmt::format("must be a table ([{}])", name));
        return (*n)->as_table();
    }

    // Every key not read is a mistake: a typo must not silently change a study.
    Expected<void> finish(const std::vector<std::string_view>& accepted) const {
        for (const auto& [key, node] : table_) {
            if (used_.count(std::string(key.str()))) continue;
            return error(&node, key.str(), fmt::format("is not a key of {}; the keys are: {}", where_, fmt::join(accepted, ", ")));
        }
        return {};
    }

    Error error(const toml::node* node, std::string_view key, const std::string& what) const {
        return make_error(fmt::format("{}:{}: {} {} {}", file_, line_of(node), where_, key, what));
    }
    std::string line_of(const toml::node* node) const {
        const auto& begin = node ? node->source().begin : table_.source().begin;
        return begin.line > 0 ? std::to_string(begin.line) : std::string("?");
    }

private:
    const toml::table& table_;
    std::string where_;
    const std::string& file_;
    std::set<std::string> used_;
};

// A TOML value as JSON, for the option table's check (read_option_value); null for a table or array.
nlohmann::json node_json(const toml::node& node) {
    if (const auto* v = node.as_string()) return nlohmann::json(v->get());
    if (const auto* v = node.as_integer()) return nlohmann::json(v->get());
    if (const auto* v = node.as_floating_point()) return nlohmann::json(v->get());
    if (const auto* v = node.as_boolean()) return nlohmann::json(v->get());
    return nlohmann::json();
}

// The options a study sets at `place` (search/options.hpp).
std::vector<const RunOption*> study_options(StudyPlace place) {
    std::vector<const RunOption*> out;
    for (const auto& o : run_option_table())
        if (o.study == place) out.push_back(&o);
    return out;
}

// The options of `place` present in the reader's table, checked by the option table's rule (the
// ranges kevo run's flags have); `proposer` (non-empty) must be the one a model's option belongs to.
// A path relative to `base_dir` is made absolute ("{task}" kept); "none" is kept as the word.
Expected<nlohmann::json> read_options(TableReader& reader, StudyPlace place, const std::string& proposer,
                                      const fs::path& base_dir) {
    nlohmann::json out = nlohmann::json::object();
    for (const RunOption* o : study_options(place)) {
        auto node = reader.take({o->name});
        if (!node) return node.error();
        if (!*node) continue;
        if (!proposer.empty() && o->owner != proposer)
            return reader.error(*node, o->name, fmt::format("applies to proposer {}, not {}", o->owner, proposer));
        const nlohmann::json given = node_json(**node);
        if (given.is_string() && (o->type != OptionType::text && o->type != OptionType::path && o->type != OptionType::word) &&
            given.get<std::string>() != "none")
            return reader.error(*node, o->name, "must be " + accepted_text(*o));  // a number is not written as a string
        auto value = read_option_value(*o, given);
        if (!value) return reader.error(*node, o->name, "must be " + accepted_text(*o));
        if (value->is_null()) value = "none";
        if (o->type == OptionType::path && !is_path_word(*o, value->get<std::string>())) {
            fs::path path = value->get<std::string>();
            if (path.is_relative()) path = base_dir / path;
            value = path.lexically_normal().string();
        }
        out[o->name] = std::move(*value);
    }
    return out;
}

std::vector<std::string_view> key_names(StudyPlace place, std::vector<std::string_view> more) {
    for (const RunOption* o : study_options(place)) more.push_back(o->name);
    return more;
}

// The bounds of the option table's `name` (a study's budget and device take kevo run's).
std::pair<int64_t, int64_t> whole_bounds(const char* name) {
    const RunOption* o = find_run_option(name);
    return {static_cast<int64_t>(o->lo), static_cast<int64_t>(o->hi)};
}
std::pair<double, double> number_bounds(const char* name) {
    const RunOption* o = find_run_option(name);
    return {o->lo, o->hi};
}

class StudyParser {
public:
    explicit StudyParser(const std::string& path) : path_(path), base_dir_(fs::absolute(fs::path(path)).parent_path()) {}

    Expected<Study> parse(const toml::table& root) {
        TableReader top(root, "the study file", path_);
        auto study_table = top.table("study");
        if (!study_table) return study_table.error();
        // CLI.md's spelling puts the study's keys in [study]; the other keeps them at the top.
        TableReader study_reader(*study_table ? **study_table : root, *study_table ? "[study]" : "the study file", path_);
        TableReader& keys = *study_table ? study_reader : top;
        if (auto r = read_study_keys(keys); !r) return r.error();
        if (auto r = read_budget(top, keys); !r) return r.error();
        if (auto r = read_run_options(top); !r) return r.error();
        if (auto r = read_models(top); !r) return r.error();
        if (*study_table) {
            if (auto r = study_reader.finish(study_key_names(true)); !r) return r.error();
        }
        if (auto r = top.finish(top_key_names(!*study_table)); !r) return r.error();
        return check_matrix();
    }

private:
    std::string path_;
    fs::path base_dir_;
    Study study_;

    static std::vector<std::string_view> study_key_names(bool with_budget) {
        std::vector<std::string_view> names = {"name", "profile", "backend", "device", "tasks", "pack", "strategies",
                                               "seeds", "concurrency"};
        if (with_budget) names.insert(names.end(), {"iterations", "max_tokens", "max_cost", "max_wall"});
        return names;
    }
    static std::vector<std::string_view> top_key_names(bool study_keys_here) {
        std::vector<std::string_view> names = {"study", "budget", "run", "models", "proposer"};
        if (study_keys_here) {
            auto more = study_key_names(false);
            names.insert(names.begin(), more.begin(), more.end());
        }
        return names;
    }

    Expected<void> read_study_keys(TableReader& r) {
        auto name = r.text({"name"});
        if (!name) return name.error();
        study_.name = name->value_or(fs::path(path_).stem().string());
        auto profile = r.word("profile", kProfileNames);
        if (!profile) return profile.error();
        study_.profile = profile->value_or("");
        auto backend = r.word("backend", find_run_option("backend")->words);
        if (!backend) return backend.error();
        study_.backend = backend->value_or("auto");
        const auto [device_lo, device_hi] = whole_bounds("device");
        auto device = r.integer({"device"}, device_lo, device_hi);
        if (!device) return device.error();
        study_.device = static_cast<int>(device->value_or(0));
        auto concurrency = r.integer({"concurrency"}, 1, 64);
        if (!concurrency) return concurrency.error();
        study_.concurrency = static_cast<int>(concurrency->value_or(0));
        if (auto t = read_tasks(r); !t) return t;
        if (auto t = tasks_have_profile(r); !t) return t;
        auto strategies = r.strings("strategies");
        if (!strategies) return strategies.error();
        study_.strategies = strategies->value_or(std::vector<std::string>{"one-plus-one"});
        const auto known = strategy_names();
        for (const auto& s : study_.strategies)
            if (std::find(known.begin(), known.end(), s) == known.end())
                return make_error(fmt::format("{}: {} strategies: unknown strategy \"{}\"; the strategies are: {}", path_,
                                              r.where(), s, fmt::join(known, ", ")));
        return read_seeds(r);
    }

    Expected<void> read_tasks(TableReader& r) {
        auto tasks = r.strings("tasks");
        if (!tasks) return tasks.error();
        auto pack = r.take({"pack"});
        if (!pack) return pack.error();
        if (*tasks && *pack) return r.error(*pack, "pack", "and tasks both choose the tasks; give one of them");
        if (*pack) {
            auto p = r.word("pack", pack_names());
            if (!p) return p.error();
            study_.tasks = pack_tasks(**p);
            if (study_.tasks.empty()) return r.error(*pack, "pack", fmt::format("\"{}\" has no task in this build yet", **p));
            return {};
        }
        if (!*tasks)
            return make_error(fmt::format("{}: {} needs tasks = [\"...\"] or pack = \"NAME\" (one of: {})", path_, r.where(),
                                          fmt::join(pack_names(), ", ")));
        const auto known = task_names();
        for (const auto& t : **tasks)
            if (std::find(known.begin(), known.end(), t) == known.end())
                return make_error(fmt::format("{}: {} tasks: unknown task \"{}\"; the tasks are: {}", path_, r.where(), t,
                                              fmt::join(known, ", ")));
        study_.tasks = **tasks;
        return {};
    }

    // A profile some tasks lack (trace: the ML pack's alone) would fail each of their cells.
    Expected<void> tasks_have_profile(TableReader& r) const {
        if (study_.profile.empty()) return {};
        std::vector<std::string> without;
        for (const auto& t : study_.tasks) {
            auto task = make_task(t);
            if (!task) return task.error();
            if (!(*task)->spec().profiles.count(study_.profile)) without.push_back(t);
        }
        if (without.empty()) return {};
        return make_error(fmt::format("{}: {} profile \"{}\": {} {} no such profile (trace is the ML pack's: pack = \"ml\")",
                                      path_, r.where(), study_.profile, fmt::join(without, ", "),
                                      without.size() == 1 ? "has" : "have"));
    }

    Expected<void> read_seeds(TableReader& r) {
        auto node = r.take({"seeds"});
        if (!node) return node.error();
        if (!*node) {
            study_.seeds = {1};
            return {};
        }
        const auto* array = (*node)->as_array();
        const std::string accepted = "must be a non-empty array of distinct integers from 0 to 2^32-1, e.g. [1, 2]";
        if (!array || array->empty()) return r.error(*node, "seeds", accepted);
        for (const auto& item : *array) {
            const auto* v = item.as_integer();
            if (!v || **v < 0 || **v > 0xFFFFFFFFll) return r.error(&item, "seeds", accepted);
            if (std::find(study_.seeds.begin(), study_.seeds.end(), **v) != study_.seeds.end())
                return r.error(&item, "seeds", fmt::format("names {} twice", **v));
            study_.seeds.push_back(**v);
        }
        return {};
    }

    // [budget] (or, in CLI.md's spelling, the [study] table's own iterations, max_cost, ...).
    Expected<void> read_budget(TableReader& top, TableReader& study_keys) {
        auto table = top.table("budget");
        if (!table) return table.error();
        std::optional<TableReader> budget_reader;
        if (*table) budget_reader.emplace(**table, "[budget]", path_);
        const bool in_study = &study_keys != &top;
        if (!*table && !in_study) return {};
        TableReader& r = *table ? *budget_reader : study_keys;
        auto iterations = r.integer({"iterations"}, whole_bounds("iterations").first, whole_bounds("iterations").second);
        if (!iterations) return iterations.error();
        const auto [tokens_lo, tokens_hi] = whole_bounds("max_tokens_total");
        auto tokens = r.integer({"max_tokens"}, tokens_lo, tokens_hi);
        if (!tokens) return tokens.error();
        auto cost = r.number({"max_cost_usd", "max_cost"}, number_bounds("max_cost").first, number_bounds("max_cost").second);
        if (!cost) return cost.error();
        auto wall = r.number({"max_wall_s", "max_wall"}, number_bounds("max_wall").first, number_bounds("max_wall").second);
        if (!wall) return wall.error();
        study_.budget.iterations = static_cast<int>(iterations->value_or(study_.budget.iterations));
        study_.budget.max_tokens = tokens->value_or(0);
        study_.budget.max_cost_usd = cost->value_or(0);
        study_.budget.max_wall_s = wall->value_or(0);
        if (*table) return budget_reader->finish({"iterations", "max_tokens", "max_cost_usd", "max_wall_s"});
        return {};
    }

    Expected<void> read_run_options(TableReader& top) {
        auto table = top.table("run");
        if (!table) return table.error();
        if (!*table) return {};
        TableReader r(**table, "[run]", path_);
        auto options = read_options(r, StudyPlace::run_table, "", base_dir_);
        if (!options) return options.error();
        study_.run_options = std::move(*options);
        return r.finish(key_names(StudyPlace::run_table, {}));
    }

    Expected<void> read_models(TableReader& top) {
        auto models = top.take({"models"});
        if (!models) return models.error();
        auto proposers = top.take({"proposer"});
        if (!proposers) return proposers.error();
        if (*models && *proposers) return top.error(*proposers, "proposer", "and [[models]] both list the models; give one of them");
        const toml::node* list = *models ? *models : *proposers;
        const std::string table_name = *models ? "models" : "proposer";
        if (!list) return make_error(fmt::format("{}: the study names no model: add a [[models]] table (name = \"tuner\", "
                                                 "proposer = \"tune\")", path_));
        const toml::array* array = list->as_array();
        if (!array || !array->is_array_of_tables() || array->empty())
            return top.error(list, table_name, fmt::format("must be tables: [[{}]]", table_name));
        for (size_t i = 0; i < array->size(); ++i) {
            auto model = read_model(*array->get(i)->as_table(), fmt::format("[[{}]] #{}", table_name, i + 1));
            if (!model) return model.error();
            for (const auto& m : study_.models)
                if (m.name == model->name)
                    return make_error(fmt::format("{}: [[{}]] #{}: the name \"{}\" is taken by another model", path_,
                                                  table_name, i + 1, model->name));
            study_.models.push_back(std::move(*model));
        }
        return {};
    }

    Expected<StudyModel> read_model(const toml::table& table, const std::string& where) {
        TableReader r(table, where, path_);
        StudyModel model;
        auto name = r.text({"name"});
        if (!name) return name.error();
        static const std::regex kName("[A-Za-z0-9._-]+");
        if (!*name || !std::regex_match(**name, kName))
            return r.error(table.get("name"), "name", "must be given, made of letters, digits, '.', '_' and '-' (it labels the cells)");
        model.name = **name;
        auto proposer = r.text({"proposer", "kind"});
        if (!proposer) return proposer.error();
        if (!*proposer || !find_proposer(**proposer))
            return r.error(table.get("proposer") ? table.get("proposer") : table.get("kind"), "proposer",
                           fmt::format("must be one of: {}", fmt::join(proposer_names(), ", ")));
        model.proposer = **proposer;
        auto options = read_options(r, StudyPlace::model_table, model.proposer, base_dir_);
        if (!options) return options.error();
        model.options = std::move(*options);
        if (auto done = r.finish(key_names(StudyPlace::model_table, {"name", "proposer"})); !done) return done.error();
        if (auto ok = check_model(model, where); !ok) return ok.error();
        return model;
    }

    // What kevo run would refuse for this model, said before anything runs.
    Expected<void> check_model(StudyModel& model, const std::string& where) {
        const auto& o = model.options;
        const auto needs = [&](const char* key, const char* example) -> Expected<void> {
            if (o.contains(key)) return {};
            return make_error(fmt::format("{}: {} (proposer {}) needs {} = {}", path_, where, model.proposer, key, example));
        };
        for (const RunOption* option : options_of(OptionPart::proposer, model.proposer))
            if (!option->required.empty())
                if (auto r = needs(option->name.c_str(), option->required.c_str()); !r) return r;
        if (model.proposer == "llm") {
            const std::string url = o["base_url"];
            if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
                return make_error(fmt::format("{}: {} base_url \"{}\": only http:// and https:// URLs are accepted", path_,
                                              where, url));
            if (o.contains("max_tokens") && o.contains("max_completion_tokens"))
                return make_error(fmt::format("{}: {}: max_tokens and max_completion_tokens both limit the answer; give one",
                                              path_, where));
        }
        return {};
    }

    // The matrix as a whole: every replay folder there, a cost cap that can be counted.
    Expected<Study> check_matrix() {
        for (const auto& task : study_.tasks) {
            const std::string from = start_kernel(study_, task);
            if (!from.empty() && !fs::is_regular_file(from))
                return make_error(fmt::format("{}: [run] from names {} for task {}: no such file", path_, from, task));
            // Its language must be the backend's, or every cell would fail when it starts.
            const std::string ext = fs::path(from).extension().string();
            const std::string by_suffix = ext.size() > 1 ? backend_for_suffix(ext.substr(1)) : std::string();
            if (!from.empty() && !by_suffix.empty() && study_.backend != "auto" && by_suffix != study_.backend)
                return make_error(fmt::format("{}: [run] from names {} for task {}, a {} file, but the study's backend is {}: "
                                              "give backend = \"{}\" or {} files", path_, from, task, by_suffix,
                                              study_.backend, by_suffix,
                                              "." + default_language_of(study_.backend).suffix()));
        }
        for (const auto& model : study_.models) {
            for (const auto& task : study_.tasks) {
                const std::string folder = replay_folder(model, task);
                if (!folder.empty() && !fs::is_directory(folder))
                    return make_error(fmt::format("{}: model {} replays {} for task {}: no such folder", path_, model.name,
                                                  folder, task));
            }
            const auto& o = model.options;
            const bool priced = o.value("price_in", 0.0) > 0 || o.value("price_out", 0.0) > 0 || o.value("cost_from_server", false);
            if (find_proposer(model.proposer)->spends_cost && study_.budget.max_cost_usd > 0 && !priced)
                return make_error(fmt::format("{}: the budget's cost cap ({:g} USD) needs model {}'s prices: give price_in and "
                                              "price_out (USD per million tokens) or cost_from_server = true", path_,
                                              study_.budget.max_cost_usd, model.name));
        }
        return study_;
    }
};

}  // namespace

Expected<Study> parse_study(const std::string& text, const std::string& path) {
    auto root = parse_toml(text, path);
    if (!root) return root.error();
    return StudyParser(path).parse(*root);
}

Expected<Study> read_study_file(const std::string& path) {
    auto text = read_text_file(path);
    if (!text) return make_error(fmt::format("study file {}: {}", path, text.error().message));
    return parse_study(*text, path);
}

}  // namespace kevo
