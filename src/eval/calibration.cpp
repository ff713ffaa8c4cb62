// Device ceilings: the cache of measurements per device and driver, their JSON form (validated on
// reading: a cache file is input), the datasheet fallback and the summary a score carries. The
// measurement itself is in calibration_measure.cpp.
#include "eval/calibration.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/settle.hpp"
#include "eval/ceiling_ratchet.hpp"

namespace kevo {
namespace {

// Version 2 added the passes and stability; version 3 marks calibrations whose plateau was measured
// at the full plan's working sets (an older quick calibration measured one point, which on the H200
// read 5% low); version 4 added the tensor-core classes. A file of another version is re-measured.
constexpr int kJsonVersion = 4;

constexpr const char* kCeilingSources[] = {"measured", "datasheet", "absent"};

// Keeps letters, digits, '.', '-' and '_'; everything else (slashes, spaces, '+') becomes '_'.
// Idempotent, so a key read back from JSON maps to the same file.
std::string sanitise_for_file_name(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
        out += keep ? c : '_';
    }
    // File names are limited to 255 bytes; a long key keeps its head and a hash of the whole.
    if (out.size() > 180) out = out.substr(0, 160) + "_" + hex64(hash64(text));
    if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
    return out;
}

std::filesystem::path cache_file(const std::string& key) {
    return cache_dir("calibration") / (sanitise_for_file_name(key) + ".json");
}

Expected<double> number_field(const nlohmann::json& j, const std::string& where, const char* key) {
    const std::string name = where.empty() ? key : where + "." + key;
    auto it = j.find(key);
    if (it == j.end()) return make_error(fmt::format("calibration: missing field '{}'", name));
    if (!it->is_number()) return make_error(fmt::format("calibration: field '{}' is not a number", name));
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < 0) return make_error(fmt::format("calibration: field '{}' is {}, not a finite figure >= 0", name, v));
    return v;
}

Expected<std::string> string_field(const nlohmann::json& j, const std::string& where, const char* key) {
    const std::string name = where.empty() ? key : where + "." + key;
    auto it = j.find(key);
    if (it == j.end()) return make_error(fmt::format("calibration: missing field '{}'", name));
    if (!it->is_string()) return make_error(fmt::format("calibration: field '{}' is not a string", name));
    return it->get<std::string>();
}

Expected<bool> bool_field(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return make_error(fmt::format("calibration: missing field '{}'", key));
    if (!it->is_boolean()) return make_error(fmt::format("calibration: field '{}' is not true or false", key));
    return it->get<bool>();
}

Expected<std::vector<double>> numbers_field(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return make_error(fmt::format("calibration: missing field '{}'", key));
    if (!it->is_array()) return make_error(fmt::format("calibration: field '{}' is not an array", key));
    std::vector<double> out;
    for (size_t i = 0; i < it->size(); ++i) {
        const auto& e = (*it)[i];
        if (!e.is_number() || !std::isfinite(e.get<double>()) || e.get<double>() < 0)
            return make_error(fmt::format("calibration: field '{}[{}]' is not a finite figure >= 0", key, i));
        out.push_back(e.get<double>());
    }
    return out;
}

Expected<std::map<ComputeClass, double>> tensor_figures(const nlohmann::json& sheet) {
    auto it = sheet.find("tensor_gflops");
    if (it == sheet.end() || !it->is_object())
        return make_error("calibration: field 'datasheet.tensor_gflops' is missing or not an object");
    std::map<ComputeClass, double> out;
    for (const auto& [name, value] : it->items()) {
        auto kind = parse_compute_class(name);
        if (!kind || !is_tensor_class(*kind))
            return make_error(fmt::format("calibration: 'datasheet.tensor_gflops' names '{}', not bf16, fp8 or int8", name));
        auto v = number_field(*it, "datasheet.tensor_gflops", name.c_str());
        if (!v) return v.error();
        out[*kind] = *v;
    }
    return out;
}

Expected<TensorCeiling> tensor_ceiling_from_json(const nlohmann::json& j, size_t index) {
    const std::string where = fmt::format("tensor[{}]", index);
    if (!j.is_object()) return make_error(fmt::format("calibration: field '{}' is not an object", where));
    TensorCeiling t;
    auto kind_name = string_field(j, where, "class");
    if (!kind_name) return kind_name.error();
    auto kind = parse_compute_class(*kind_name);
    if (!kind || !is_tensor_class(*kind))
        return make_error(fmt::format("calibration: field '{}.class' is '{}', not bf16, fp8 or int8", where, *kind_name));
    t.kind = *kind;
    auto source = string_field(j, where, "source");
    if (!source) return source.error();
    const auto* found = std::find_if(std::begin(kCeilingSources), std::end(kCeilingSources),
                                     [&](const char* s) { return *source == s; });
    if (found == std::end(kCeilingSources))
        return make_error(fmt::format("calibration: field '{}.source' is '{}', not measured, datasheet or absent", where,
                                      *source));
    t.source = static_cast<CeilingSource>(found - std::begin(kCeilingSources));
    auto gflops = number_field(j, where, "gflops");
    if (!gflops) return gflops.error();
    t.gflops = *gflops;
    if (t.source != CeilingSource::absent && !(t.gflops > 0))
        return make_error(fmt::format("calibration: field '{}.gflops' is 0 for a {} ceiling", where, *source));
    auto runs = numbers_field(j, "runs");
    if (!runs) return make_error(fmt::format("{} (in {})", runs.error().message, where));
    t.runs = std::move(*runs);
    auto how = string_field(j, where, "how");
    if (!how) return how.error();
    t.how = std::move(*how);
    return t;
}

}  // namespace

const char* ceiling_source_name(CeilingSource source) { return kCeilingSources[static_cast<int>(source)]; }

double Calibration::peak_gflops(ComputeClass kind) const {
    if (kind == ComputeClass::fp32) return fp32_gflops;
    const TensorCeiling* t = tensor_ceiling(kind);
    return t ? t->gflops : 0;
}

const TensorCeiling* Calibration::tensor_ceiling(ComputeClass kind) const {
    for (const auto& t : tensor)
        if (t.kind == kind) return &t;
    return nullptr;
}

double Calibration::bandwidth_at(double working_set_bytes) const {
    if (curve.empty()) return bandwidth_gbs;
    auto best = [](const BandwidthPoint& p) { return std::max(p.copy_gbs, p.triad_gbs); };
    if (!(working_set_bytes > curve.front().working_set_bytes)) return best(curve.front());
    if (!(working_set_bytes < curve.back().working_set_bytes)) return best(curve.back());
    auto hi = std::upper_bound(curve.begin(), curve.end(), working_set_bytes,
                               [](double ws, const BandwidthPoint& p) { return ws < p.working_set_bytes; });
    auto lo = hi - 1;
    const double y0 = best(*lo), y1 = best(*hi);
    const double x0 = lo->working_set_bytes, x1 = hi->working_set_bytes;
    if (!(x1 > x0)) return y1;
    if (!(y0 > 0) || !(y1 > 0)) {  // a logarithm needs positive figures; fall back to linear
        const double t = (working_set_bytes - x0) / (x1 - x0);
        return y0 + t * (y1 - y0);
    }
    const double t = std::log(working_set_bytes / x0) / std::log(x1 / x0);
    return std::exp(std::log(y0) + t * std::log(y1 / y0));
}

nlohmann::json to_json(const Calibration& c) {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : c.curve)
        curve.push_back({{"working_set_bytes", p.working_set_bytes}, {"copy_gbs", p.copy_gbs}, {"triad_gbs", p.triad_gbs}});
    nlohmann::json sheet = nullptr;
    if (c.datasheet) {
        nlohmann::json tensor_sheet = nlohmann::json::object();
        for (const auto& [kind, gflops] : c.datasheet->tensor_gflops) tensor_sheet[compute_class_name(kind)] = gflops;
        sheet = {{"name", c.datasheet->name},
                 {"bandwidth_gbs", c.datasheet->bandwidth_gbs},
                 {"fp32_gflops", c.datasheet->fp32_gflops},
                 {"tensor_gflops", std::move(tensor_sheet)}};
    }
    nlohmann::json tensor = nlohmann::json::array();
    for (const auto& t : c.tensor)
        tensor.push_back({{"class", compute_class_name(t.kind)},
                          {"source", ceiling_source_name(t.source)},
                          {"gflops", t.gflops},
                          {"runs", t.runs},
                          {"how", t.how}});
    return {{"version", kJsonVersion},
            {"device_key", c.device_key},
            {"device_name", c.device_name},
            {"source", c.source},
            {"measured_at", c.measured_at},
            {"bandwidth_gbs", c.bandwidth_gbs},
            {"fp32_gflops", c.fp32_gflops},
            {"curve", std::move(curve)},
            {"datasheet", std::move(sheet)},
            {"stable", c.stable},
            {"bandwidth_passes", c.bandwidth_passes},
            {"fp32_passes", c.fp32_passes},
            {"plateau_from_bytes", c.plateau_from_bytes},
            {"llc_bytes", c.llc_bytes},
            {"notes", c.notes},
            {"tensor", std::move(tensor)}};
}

Expected<Calibration> calibration_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("calibration: the document is not a JSON object");
    auto version = number_field(j, "", "version");
    if (!version) return version.error();
    if (*version != kJsonVersion)
        return make_error(fmt::format("calibration: field 'version' is {}, this kevo reads {}", *version, kJsonVersion));

    Calibration c;
    const std::pair<const char*, std::string*> strings[] = {{"device_key", &c.device_key},
                                                            {"device_name", &c.device_name},
                                                            {"source", &c.source},
                                                            {"measured_at", &c.measured_at}};
    for (auto [key, slot] : strings) {
        auto v = string_field(j, "", key);
        if (!v) return v.error();
        *slot = std::move(*v);
    }
    if (c.device_key.empty()) return make_error("calibration: field 'device_key' is empty");
    if (c.source != "measured" && c.source != "datasheet")
        return make_error(fmt::format("calibration: field 'source' is '{}', not 'measured' or 'datasheet'", c.source));
    const std::pair<const char*, double*> numbers[] = {{"bandwidth_gbs", &c.bandwidth_gbs},
                                                       {"fp32_gflops", &c.fp32_gflops}};
    for (auto [key, slot] : numbers) {
        auto v = number_field(j, "", key);
        if (!v) return v.error();
        *slot = *v;
    }

    auto curve = j.find("curve");
    if (curve == j.end()) return make_error("calibration: missing field 'curve'");
    if (!curve->is_array()) return make_error("calibration: field 'curve' is not an array");
    for (size_t i = 0; i < curve->size(); ++i) {
        const auto& point = (*curve)[i];
        const std::string where = fmt::format("curve[{}]", i);
        if (!point.is_object()) return make_error(fmt::format("calibration: field '{}' is not an object", where));
        BandwidthPoint p;
        const std::pair<const char*, double*> fields[] = {
            {"working_set_bytes", &p.working_set_bytes}, {"copy_gbs", &p.copy_gbs}, {"triad_gbs", &p.triad_gbs}};
        for (auto [key, slot] : fields) {
            auto v = number_field(point, where, key);
            if (!v) return v.error();
            *slot = *v;
        }
        if (!c.curve.empty() && !(p.working_set_bytes > c.curve.back().working_set_bytes))
            return make_error(fmt::format("calibration: field '{}.working_set_bytes' does not ascend", where));
        c.curve.push_back(p);
    }

    auto sheet = j.find("datasheet");
    if (sheet == j.end()) return make_error("calibration: missing field 'datasheet'");
    if (!sheet->is_null()) {
        if (!sheet->is_object()) return make_error("calibration: field 'datasheet' is neither null nor an object");
        Datasheet d;
        auto name = string_field(*sheet, "datasheet", "name");
        if (!name) return name.error();
        d.name = std::move(*name);
        auto bw = number_field(*sheet, "datasheet", "bandwidth_gbs");
        if (!bw) return bw.error();
        d.bandwidth_gbs = *bw;
        auto flops = number_field(*sheet, "datasheet", "fp32_gflops");
        if (!flops) return flops.error();
        d.fp32_gflops = *flops;
        auto tensor_sheet = tensor_figures(*sheet);
        if (!tensor_sheet) return tensor_sheet.error();
        d.tensor_gflops = std::move(*tensor_sheet);
        c.datasheet = std::move(d);
    }

    auto stable = bool_field(j, "stable");
    if (!stable) return stable.error();
    c.stable = *stable;
    const std::pair<const char*, std::vector<double>*> passes[] = {{"bandwidth_passes", &c.bandwidth_passes},
                                                                   {"fp32_passes", &c.fp32_passes}};
    for (auto [key, slot] : passes) {
        auto v = numbers_field(j, key);
        if (!v) return v.error();
        *slot = std::move(*v);
    }
    auto plateau_from = number_field(j, "", "plateau_from_bytes");
    if (!plateau_from) return plateau_from.error();
    c.plateau_from_bytes = *plateau_from;
    auto llc = number_field(j, "", "llc_bytes");
    if (!llc) return llc.error();
    c.llc_bytes = static_cast<uint64_t>(*llc);
    auto notes = j.find("notes");
    if (notes == j.end() || !notes->is_array()) return make_error("calibration: field 'notes' is missing or not an array");
    for (const auto& n : *notes) {
        if (!n.is_string()) return make_error("calibration: field 'notes' holds a non-string");
        c.notes.push_back(n.get<std::string>());
    }
    auto tensor = j.find("tensor");
    if (tensor == j.end() || !tensor->is_array()) return make_error("calibration: field 'tensor' is missing or not an array");
    for (size_t i = 0; i < tensor->size(); ++i) {
        auto t = tensor_ceiling_from_json((*tensor)[i], i);
        if (!t) return t.error();
        if (c.tensor_ceiling(t->kind))
            return make_error(fmt::format("calibration: field 'tensor' holds class {} twice", compute_class_name(t->kind)));
        c.tensor.push_back(std::move(*t));
    }
    return c;
}

CeilingsUsed ceilings_used(const Calibration& c) {
    CeilingsUsed u;
    u.source = c.source.empty() ? "none" : c.source;
    u.bandwidth_gbs = c.bandwidth_gbs;
    u.fp32_gflops = c.fp32_gflops;
    u.measured_at = c.measured_at;
    u.stable = c.stable;
    u.spread = std::max(relative_spread(c.bandwidth_passes), relative_spread(c.fp32_passes));
    if (c.datasheet) {
        u.datasheet = fmt::format("{}: {:.0f} GB/s, {:.0f} GFLOP/s", c.datasheet->name, c.datasheet->bandwidth_gbs,
                                  c.datasheet->fp32_gflops);
        u.datasheet_bandwidth_gbs = c.datasheet->bandwidth_gbs;
        u.datasheet_fp32_gflops = c.datasheet->fp32_gflops;
        for (const auto& [kind, gflops] : c.datasheet->tensor_gflops)
            u.datasheet_tensor.push_back({compute_class_name(kind), "datasheet", gflops});
    }
    for (const auto& t : c.tensor) u.tensor.push_back({compute_class_name(t.kind), ceiling_source_name(t.source), t.gflops});
    return u;
}

std::string calibration_key(const DeviceInfo& info) {
    return sanitise_for_file_name(info.backend + "/" + info.name + "/" + info.driver);
}

std::optional<Calibration> load_cached_calibration(const DeviceInfo& info) {
    const std::string key = calibration_key(info);
    auto text = read_text_file(cache_file(key));
    if (!text) return std::nullopt;
    const auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return std::nullopt;
    auto c = calibration_from_json(j);
    // A file renamed or copied by hand must not pass for another device's figures.
    if (!c || c->device_key != key) return std::nullopt;
    // A rate measured since (a peer, a best-known kernel) may have raised a bounded class.
    bound_tensor_ceilings(*c, load_rate_record(c->device_name));
    return std::move(*c);
}

Expected<void> store_calibration(const Calibration& c) {
    if (c.device_key.empty()) return make_error("calibration: cannot store a calibration without a device key");
    return write_file_atomic(cache_file(c.device_key), to_json(c).dump(2) + "\n");
}

std::optional<Calibration> datasheet_calibration(const DeviceInfo& info) {
    // The table holds GPUs only; a CPU named after its Apple chip must not get the GPU's figures.
    if (info.is_cpu) return std::nullopt;
    auto sheet = datasheet_for(info.name);
    if (!sheet) return std::nullopt;
    Calibration c;
    c.device_key = calibration_key(info);
    c.device_name = info.name;
    c.source = "datasheet";
    c.bandwidth_gbs = sheet->bandwidth_gbs;
    c.fp32_gflops = sheet->fp32_gflops;
    c.tensor = datasheet_tensor_ceilings(sheet, "no measurement of this device");
    c.datasheet = std::move(sheet);
    bound_tensor_ceilings(c, load_rate_record(c.device_name));
    return c;
}

}  // namespace kevo
