// See weights_text.hpp.
#include "pack/weights_text.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/text_table.hpp"

namespace kevo {

std::string render_weights_text(const PackWeights& weights, const std::vector<std::string>& pack_tasks) {
    std::vector<std::string> tasks;  // every task any vector names, in the file's order
    for (const auto& v : weights.vectors)
        for (const auto& w : v.weights)
            if (std::find(tasks.begin(), tasks.end(), w.task) == tasks.end()) tasks.push_back(w.task);
    std::vector<TextTable::Column> columns = {{"task"}};
    for (const auto& v : weights.vectors) columns.push_back({v.name, TextTable::Align::right});
    columns.push_back({"in this build"});
    TextTable table(columns);
    for (const auto& task : tasks) {
        std::vector<std::string> row = {task};
        for (const auto& v : weights.vectors) {
            const auto* w = v.find(task);
            row.push_back(w ? fmt::format("{:.4f}", w->weight) : "-");
        }
        const bool present = std::find(pack_tasks.begin(), pack_tasks.end(), task) != pack_tasks.end();
        row.push_back(present ? "yes" : "no (pending)");
        table.add_row(std::move(row));
    }
    std::string out = fmt::format("weights of pack {} ({}):\n{}", weights.pack, weights.path, table.render());
    for (const auto& v : weights.vectors) {
        out += fmt::format("{}: {}\n  source: {}\n  mapping: {}\n", v.name, v.url, v.source, v.mapping);
        for (const auto& w : v.weights)
            if (w.weight == 0) out += fmt::format("  {} = 0: {}\n", w.task, w.zero_because);
    }
    return out;
}

}  // namespace kevo
