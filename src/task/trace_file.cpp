// Reads a task's trace.toml (see trace_profile.hpp) with toml++: the [trace] table, one [[shape]]
// per production shape and [[left_out]] for the anchor shapes the task cannot take. Every key is
// checked, so a misspelt one is an error naming the accepted keys, not a shape silently changed.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "core/toml_parse.hpp"
#include "task/trace_profile.hpp"

namespace kevo {
namespace {

class TraceReader {
public:
    TraceReader(const std::string& path, const TaskSpec& spec) : path_(path), spec_(spec) {
        const auto& paper = spec.profiles.at("paper");
        for (const auto& [name, value] : paper.front().params) param_names_.push_back(name);
    }

    Expected<TraceProfile> read(const toml::table& doc) {
        TraceProfile out;
        for (const auto& [key, node] : doc) {
            const std::string k(key.str());
            Expected<void> ok = {};
            if (k == "trace") ok = header(node, out);
            else if (k == "shape") ok = each_table(node, k, [&](const toml::table& t) { return shape(t, out); });
            else if (k == "left_out") ok = each_table(node, k, [&](const toml::table& t) { return left_out(t, out); });
            else ok = error(node, fmt::format("{} is not a key of a trace file; the keys are: trace, shape, left_out", k));
            if (!ok) return ok.error();
        }
        if (out.sizes.empty()) return make_error(fmt::format("{}: the file has no [[shape]]", path_));
        const auto held = std::count_if(out.sizes.begin(), out.sizes.end(), [](const SizeSpec& s) { return s.heldout; });
        if (held != 1)
            return make_error(fmt::format("{}: {} shapes are held out; exactly one must be (heldout = true)", path_, held));
        return out;
    }

private:
    std::string path_;
    const TaskSpec& spec_;
    std::vector<std::string> param_names_;
    std::set<std::string> labels_;

    Error error(const toml::node& node, const std::string& what) const {
        const auto line = node.source().begin.line;
        return make_error(fmt::format("{}:{}: {}", path_, line > 0 ? std::to_string(line) : "?", what));
    }

    template <class Each>
    Expected<void> each_table(const toml::node& node, const std::string& key, Each&& each) {
        const auto* list = node.as_array();
        if (!list) return error(node, fmt::format("{} must be an array of tables: [[{}]]", key, key));
        for (const auto& item : *list) {
            if (!item.is_table()) return error(item, fmt::format("{} must be an array of tables: [[{}]]", key, key));
            if (auto ok = each(*item.as_table()); !ok) return ok;
        }
        return {};
    }

    Expected<std::string> text(const toml::node& node, const std::string& key) const {
        if (!node.is_string() || node.as_string()->get().empty()) return error(node, key + " must be a non-empty string");
        return std::string(**node.as_string());
    }

    Expected<std::vector<std::string>> ids(const toml::node& node) const {
        const auto* list = node.as_array();
        if (!list || list->empty()) return error(node, "ids must be a non-empty list of strings: [\"3\", \"7\"]");
        std::vector<std::string> out;
        for (const auto& item : *list) {
            if (!item.is_string()) return error(item, "ids must hold only strings");
            out.push_back(**item.as_string());
        }
        return out;
    }

    Expected<void> header(const toml::node& node, TraceProfile& out) const {
        const auto* table = node.as_table();
        if (!table) return error(node, "trace must be a table: [trace]");
        for (const auto& [key, value] : *table) {
            const std::string k(key.str());
            auto t = text(value, k);
            if (!t) return t.error();
            if (k == "source") out.source = *t;
            else if (k == "mapping") out.mapping = *t;
            else return error(value, fmt::format("{} is not a key of [trace]; the keys are: source, mapping", k));
        }
        if (out.source.empty()) return error(node, "[trace] has no source: say where the shapes come from");
        return {};
    }

    Expected<void> params(const toml::node& node, SizeSpec& size) const {
        const auto* table = node.as_table();
        if (!table) return error(node, "params must be a table: { name = value, ... }");
        std::vector<std::string> given;
        for (const auto& [key, value] : *table) given.emplace_back(key.str());
        std::vector<std::string> want = param_names_, sorted_given = given;
        std::sort(want.begin(), want.end());
        std::sort(sorted_given.begin(), sorted_given.end());
        if (sorted_given != want)
            return error(node, fmt::format("params has {}; {}'s sizes take exactly {}", fmt::join(given, ", "), spec_.name,
                                           fmt::join(param_names_, ", ")));
        for (const auto& name : param_names_) {  // in the order of the task's own sizes
            const auto* v = table->get(name);
            if (!v->is_integer()) return error(*v, fmt::format("params.{} must be an integer", name));
            size.params.emplace_back(name, **v->as_integer());
        }
        return {};
    }

    Expected<void> shape(const toml::table& table, TraceProfile& out) {
        SizeSpec size;
        std::string anchor, note;
        std::vector<std::string> anchor_ids;
        bool counted = false;
        for (const auto& [key, value] : table) {
            const std::string k(key.str());
            Expected<void> ok = {};
            if (k == "label" || k == "anchor" || k == "note") {
                auto t = text(value, k);
                if (!t) return t.error();
                (k == "label" ? size.label : k == "anchor" ? anchor : note) = *t;
            } else if (k == "params") {
                ok = params(value, size);
            } else if (k == "calls") {
                if (!value.is_integer() || **value.as_integer() < 1) return error(value, "calls must be a positive integer");
                size.weight = static_cast<double>(**value.as_integer());
                counted = true;
            } else if (k == "ids") {
                auto got = ids(value);
                if (!got) return got.error();
                anchor_ids = *got;
            } else if (k == "heldout" || k == "device_reference") {
                if (!value.is_boolean()) return error(value, k + " must be true or false");
                (k == "heldout" ? size.heldout : size.device_reference) = **value.as_boolean();
            } else {
                ok = error(value, fmt::format("{} is not a key of a [[shape]]; the keys are: label, params, calls, anchor, "
                                              "ids, note, heldout, device_reference", k));
            }
            if (!ok) return ok;
        }
        if (size.label.empty() || size.params.empty() || anchor.empty() || anchor_ids.empty())
            return error(table, "a [[shape]] needs label, params, anchor and ids");
        if (!labels_.insert(size.label).second) return error(table, fmt::format("label {} is given twice", size.label));
        size.source = fmt::format("{} #{}{}{}", anchor, fmt::join(anchor_ids, "+"), note.empty() ? "" : ": " + note,
                                  counted ? "" : " (no call count: weight 1)");
        if (!counted) ++out.uncounted;
        out.sizes.push_back(std::move(size));
        return {};
    }

    Expected<void> left_out(const toml::table& table, TraceProfile& out) const {
        TraceLeftOut left;
        for (const auto& [key, value] : table) {
            const std::string k(key.str());
            if (k == "ids") {
                auto got = ids(value);
                if (!got) return got.error();
                left.ids = *got;
                continue;
            }
            auto t = text(value, k);
            if (!t) return t.error();
            if (k == "anchor") left.anchor = *t;
            else if (k == "why") left.why = *t;
            else return error(value, fmt::format("{} is not a key of a [[left_out]]; the keys are: anchor, ids, why", k));
        }
        if (left.anchor.empty() || left.ids.empty() || left.why.empty())
            return error(table, "a [[left_out]] needs anchor, ids and why");
        out.left_out.push_back(std::move(left));
        return {};
    }
};

}  // namespace

Expected<TraceProfile> parse_trace_file(const std::string& text, const std::string& path, const TaskSpec& spec) {
    if (!spec.profiles.count("paper") || spec.profiles.at("paper").empty())
        return make_error(fmt::format("{}: task {} has no paper sizes to take the parameter names from", path, spec.name));
    auto doc = parse_toml(text, path);
    if (!doc) return doc.error();
    return TraceReader(path, spec).read(*doc);
}

}  // namespace kevo
