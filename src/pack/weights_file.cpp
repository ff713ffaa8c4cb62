// Parses and checks a weights file (see weights.hpp); a syntax error becomes an Error naming the
// line and column (core/toml_parse.hpp).
#include <algorithm>
#include <cmath>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/toml_parse.hpp"
#include "pack/weights.hpp"

namespace kevo {
namespace {

class WeightsParser {
public:
    explicit WeightsParser(const std::string& path) : path_(path) {}

    Expected<PackWeights> parse(const toml::table& root) {
        PackWeights out;
        out.path = path_;
        for (const auto& [key, node] : root) {
            if (key.str() == "pack") {
                auto pack = text(node, "pack");
                if (!pack) return pack.error();
                out.pack = *pack;
            } else if (key.str() == "vectors") {
                if (!node.is_table()) return error(node, "vectors", "must be a table of vectors: [vectors.NAME]");
                for (const auto& [name, vector] : *node.as_table()) {
                    auto v = read_vector(std::string(name.str()), vector);
                    if (!v) return v.error();
                    out.vectors.push_back(std::move(*v));
                }
            } else {
                return error(node, key.str(), "is not a key of a weights file; the keys are: pack, vectors");
            }
        }
        // toml++ keeps a table's keys by name; the file's order is the one to show.
        std::sort(out.vectors.begin(), out.vectors.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
        if (out.pack.empty()) return make_error(fmt::format("{}: the weights file names no pack: add pack = \"NAME\"", path_));
        if (out.vectors.empty())
            return make_error(fmt::format("{}: the weights file has no vector: add a [vectors.NAME] table", path_));
        return out;
    }

private:
    std::string path_;

    Error error(const toml::node& node, std::string_view key, const std::string& what) const {
        const auto line = node.source().begin.line;
        return make_error(fmt::format("{}:{}: {} {}", path_, line > 0 ? std::to_string(line) : "?", key, what));
    }

    Expected<std::string> text(const toml::node& node, std::string_view key) const {
        if (!node.is_string() || node.as_string()->get().empty()) return error(node, key, "must be a non-empty string");
        return std::string(**node.as_string());
    }

    Expected<WeightVector> read_vector(const std::string& name, const toml::node& node) {
        static const std::regex kName("[A-Za-z0-9._-]+");
        const std::string where = "vectors." + name;
        if (!std::regex_match(name, kName)) return error(node, where, "is not a vector name (letters, digits, '.', '_', '-')");
        if (!node.is_table()) return error(node, where, fmt::format("must be a table: [{}]", where));
        WeightVector v;
        v.name = name;
        v.line = static_cast<int>(node.source().begin.line);
        const toml::table* zero_because = nullptr;
        for (const auto& [key, value] : *node.as_table()) {
            const std::string_view k = key.str();
            const std::string full = where + "." + std::string(k);
            if (k == "source" || k == "url" || k == "mapping") {
                auto t = text(value, full);
                if (!t) return t.error();
                (k == "source" ? v.source : k == "url" ? v.url : v.mapping) = *t;
            } else if (k == "weights") {
                if (auto r = read_weights(value, full, v); !r) return r.error();
            } else if (k == "zero_because" || k == "left_out") {
                if (!value.is_table()) return error(value, full, "must be a table of strings: [" + full + "]");
                if (k == "zero_because") zero_because = value.as_table();
                for (const auto& [task, reason] : *value.as_table()) {
                    auto r = text(reason, full + "." + std::string(task.str()));
                    if (!r) return r.error();
                    if (k == "left_out") v.left_out[std::string(task.str())] = *r;
                }
            } else {
                return error(value, full, "is not a key of a vector; the keys are: source, url, mapping, weights, zero_because, left_out");
            }
        }
        const std::pair<const char*, const std::string*> required[] = {{"source", &v.source}, {"url", &v.url}, {"mapping", &v.mapping}};
        for (const auto& [key, given] : required) {
            if (given->empty()) return error(node, where, fmt::format("needs {} = \"...\" (where the weights come from)", key));
        }
        if (v.url.rfind("http://", 0) != 0 && v.url.rfind("https://", 0) != 0)
            return error(*node.as_table()->get("url"), where + ".url", "must be an http:// or https:// URL");
        if (v.weights.empty()) return error(node, where, fmt::format("needs a [{}.weights] table", where));
        if (auto r = read_zero_reasons(zero_because, where, v); !r) return r.error();
        return check_sum(node, where, v);
    }

    Expected<void> read_weights(const toml::node& node, const std::string& where, WeightVector& v) {
        if (!node.is_table()) return error(node, where, "must be a table: TASK = WEIGHT");
        for (const auto& [task, value] : *node.as_table()) {
            const std::string key = where + "." + std::string(task.str());
            const auto w = value.value<double>();
            if (!value.is_number() || !w || !std::isfinite(*w) || *w < 0)
                return error(value, key, "must be a number >= 0");
            v.weights.push_back({std::string(task.str()), *w, "", static_cast<int>(value.source().begin.line)});
        }
        std::sort(v.weights.begin(), v.weights.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
        return {};
    }

    // Every 0 weight has its reason, and only 0 weights have one.
    Expected<void> read_zero_reasons(const toml::table* reasons, const std::string& where, WeightVector& v) {
        if (reasons)
            for (const auto& [task, reason] : *reasons) {
                const auto w = std::find_if(v.weights.begin(), v.weights.end(),
                                            [&](const OperatorWeight& o) { return o.task == task.str(); });
                const std::string key = where + ".zero_because." + std::string(task.str());
                if (w == v.weights.end()) return error(reason, key, fmt::format("gives a reason for a task {}.weights does not list", where));
                if (w->weight != 0)
                    return error(reason, key, fmt::format("gives a reason for a zero weight, but the weight is {:g}", w->weight));
                w->zero_because = **reason.as_string();
            }
        for (const auto& w : v.weights)
            if (w.weight == 0 && w.zero_because.empty())
                return make_error(fmt::format("{}:{}: {}.weights.{} is 0: say why in [{}.zero_because] ({} = \"...\")", path_,
                                              w.line, where, w.task, where, w.task));
        return {};
    }

    Expected<WeightVector> check_sum(const toml::node& node, const std::string& where, WeightVector v) {
        double sum = 0;
        for (const auto& w : v.weights) sum += w.weight;
        if (std::abs(sum - 1) > kWeightSumTolerance)
            return error(node, where, fmt::format("weights sum to {:.9g}, not 1 (within {:g}): renormalise them", sum,
                                                  kWeightSumTolerance));
        return v;
    }
};

}  // namespace

const OperatorWeight* WeightVector::find(const std::string& task) const {
    for (const auto& w : weights)
        if (w.task == task) return &w;
    return nullptr;
}

Expected<PackWeights> parse_weights(const std::string& text, const std::string& path) {
    auto root = parse_toml(text, path);
    if (!root) return root.error();
    return WeightsParser(path).parse(*root);
}

Expected<PackWeights> read_weights_file(const std::string& path) {
    auto text = read_text_file(path);
    if (!text) return make_error(fmt::format("weights file {}: {}", path, text.error().message));
    return parse_weights(*text, path);
}

}  // namespace kevo
