// See knob_defaults.hpp.
#include "search/knob_defaults.hpp"

#include <sstream>
#include <vector>

namespace kevo {

std::string apply_knob_defaults(const std::string& source, const std::map<std::string, std::string>& values) {
    std::istringstream in(source);
    std::string line, out;
    while (std::getline(in, line)) {
        const auto at = line.find("kevo: tune ");
        if (at != std::string::npos && line.find("//") < at) {
            std::istringstream words(line.substr(at + 11));
            std::string name, v;
            words >> name;
            std::vector<std::string> list;
            while (words >> v) list.push_back(v);
            if (auto it = values.find(name); it != values.end()) {
                std::vector<std::string> reordered = {it->second};
                for (const auto& x : list)
                    if (x != it->second) reordered.push_back(x);
                line = line.substr(0, at) + "kevo: tune " + name;
                for (const auto& x : reordered) line += " " + x;
            }
        }
        out += line + "\n";
    }
    if (!source.empty() && source.back() != '\n' && !out.empty()) out.pop_back();
    return out;
}

std::string strip_kevo_header(const std::string& source) {
    size_t pos = 0;
    if (source.compare(0, 12, "// kevo run ") != 0) return source;
    // The header is the leading block of comment lines.
    while (pos < source.size() && source.compare(pos, 2, "//") == 0) {
        const size_t end = source.find('\n', pos);
        if (end == std::string::npos) return {};
        pos = end + 1;
    }
    return source.substr(pos);
}

}  // namespace kevo
