// Vendor peak figures (memory bandwidth, FP32 with FMA as 2 FLOP, and for NVIDIA datacenter parts
// the dense tensor-core rates: bf16 and fp8 with fp32 accumulate, int8) for the fallback ceilings when
// a device has not been calibrated yet, and the cross-check beside a measurement. Apple figures are
// those of the Metal-Sci paper. Tensor figures are the vendor's dense (not 2:4 sparse) ones; 0 where
// the part has no such unit or the table does not know it.
#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "eval/calibration.hpp"

namespace kevo {
namespace {

struct Entry {
    const char* name;
    std::vector<std::string_view> tokens;    // all must appear as whole words
    std::vector<std::string_view> excludes;  // none may appear: variants with other figures
    double bandwidth_gbs;
    double fp32_gflops;
    double bf16_gflops = 0, fp8_gflops = 0, int8_gops = 0;
};

// The entry with the most matching tokens wins, so "H100 PCIe" beats "H100" whatever the order.
const std::vector<Entry>& table() {
    static const std::vector<Entry> entries = {
        // NVIDIA datacenter.
        {"NVIDIA H200 SXM", {"H200"}, {}, 4800, 66900, 989400, 1978900, 1978900},
        {"NVIDIA H100 SXM", {"H100"}, {}, 3350, 66900, 989400, 1978900, 1978900},
        {"NVIDIA H100 PCIe", {"H100", "PCIe"}, {}, 2000, 51200, 756000, 1513000, 1513000},
        {"NVIDIA A100 80GB SXM", {"A100", "80GB"}, {}, 2039, 19500, 312000, 0, 624000},
        {"NVIDIA A100 40GB", {"A100"}, {}, 1555, 19500, 312000, 0, 624000},
        {"NVIDIA L40S", {"L40S"}, {}, 864, 91600, 362050, 733000, 733000},
        {"NVIDIA L4", {"L4"}, {}, 300, 30300, 121000, 242500, 242500},
        {"NVIDIA V100", {"V100"}, {}, 900, 15700},
        {"NVIDIA T4", {"T4"}, {}, 320, 8100},
        // NVIDIA consumer; laptop parts and Ti/SUPER refreshes have other figures.
        {"NVIDIA GeForce RTX 4090", {"RTX", "4090"}, {"Laptop"}, 1008, 82600},
        {"NVIDIA GeForce RTX 4080", {"RTX", "4080"}, {"Laptop", "SUPER"}, 717, 48700},
        {"NVIDIA GeForce RTX 3090", {"RTX", "3090"}, {"Laptop", "Ti"}, 936, 35600},
        {"NVIDIA GeForce RTX 3080", {"RTX", "3080"}, {"Laptop", "Ti"}, 760, 29800},
        {"NVIDIA GeForce RTX 2080 Ti", {"RTX", "2080", "Ti"}, {"Laptop"}, 616, 13400},
        // Apple silicon (GPU).
        {"Apple M1", {"M1"}, {"Pro", "Max", "Ultra"}, 68, 2600},
        {"Apple M1 Pro", {"M1", "Pro"}, {}, 200, 5200},
        {"Apple M1 Max", {"M1", "Max"}, {}, 400, 10400},
        {"Apple M2", {"M2"}, {"Pro", "Max", "Ultra"}, 100, 3600},
        {"Apple M2 Pro", {"M2", "Pro"}, {}, 200, 6800},
        {"Apple M2 Max", {"M2", "Max"}, {}, 400, 13600},
        {"Apple M3", {"M3"}, {"Pro", "Max", "Ultra"}, 100, 4100},
        {"Apple M3 Pro", {"M3", "Pro"}, {}, 150, 7400},
        {"Apple M3 Max", {"M3", "Max"}, {}, 400, 16400},
        {"Apple M4", {"M4"}, {"Pro", "Max", "Ultra"}, 120, 4300},
        {"Apple M4 Pro", {"M4", "Pro"}, {}, 273, 9200},
        {"Apple M4 Max", {"M4", "Max"}, {}, 546, 18400},
    };
    return entries;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Whole-word and case-insensitive, so that "L4" does not match "NVIDIA L40S".
bool has_word(const std::string& haystack_lower, std::string_view word) {
    const std::string needle = lower(word);
    for (size_t pos = haystack_lower.find(needle); pos != std::string::npos;
         pos = haystack_lower.find(needle, pos + 1)) {
        const bool left_ok = pos == 0 || !is_word_char(haystack_lower[pos - 1]);
        const size_t end = pos + needle.size();
        const bool right_ok = end == haystack_lower.size() || !is_word_char(haystack_lower[end]);
        if (left_ok && right_ok) return true;
    }
    return false;
}

}  // namespace

std::optional<Datasheet> datasheet_for(const std::string& device_name) {
    const std::string name = lower(device_name);
    const Entry* best = nullptr;
    for (const Entry& e : table()) {
        const bool all = std::all_of(e.tokens.begin(), e.tokens.end(), [&](auto t) { return has_word(name, t); });
        const bool none = std::none_of(e.excludes.begin(), e.excludes.end(), [&](auto t) { return has_word(name, t); });
        if (all && none && (!best || e.tokens.size() > best->tokens.size())) best = &e;
    }
    if (!best) return std::nullopt;
    Datasheet sheet{best->name, best->bandwidth_gbs, best->fp32_gflops, {}};
    const std::pair<ComputeClass, double> tensor[] = {{ComputeClass::tensor_bf16, best->bf16_gflops},
                                                      {ComputeClass::tensor_fp8, best->fp8_gflops},
                                                      {ComputeClass::tensor_int8, best->int8_gops}};
    for (auto [kind, gflops] : tensor)
        if (gflops > 0) sheet.tensor_gflops[kind] = gflops;
    return sheet;
}

}  // namespace kevo
