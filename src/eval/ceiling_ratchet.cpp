// See ceiling_ratchet.hpp.
#include "eval/ceiling_ratchet.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/files.hpp"
#include "eval/roofline.hpp"

namespace kevo {
namespace {

std::filesystem::path record_path(const std::string& device_name) {
    std::string file;
    for (char c : device_name) file += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
    if (file.empty() || file[0] == '.') file.insert(file.begin(), '_');
    return cache_dir("ceilings") / (file + ".json");
}

std::optional<double> datasheet_figure(const std::optional<Datasheet>& sheet, ComputeClass kind) {
    if (!sheet) return std::nullopt;
    const auto it = sheet->tensor_gflops.find(kind);
    return it == sheet->tensor_gflops.end() ? std::nullopt : std::optional<double>(it->second);
}

nlohmann::json to_json(const RateRecord& r) {
    nlohmann::json rates = nlohmann::json::array();
    for (const auto& c : r.rates)
        rates.push_back({{"class", compute_class_name(c.kind)}, {"gflops", c.gflops}, {"by", c.by}, {"at", c.at}});
    return {{"device_name", r.device_name}, {"rates", std::move(rates)}};
}

// A file that does not read is treated as no record: the ceilings then fall back to the calibration
// and the datasheet, which are bounds of their own.
std::optional<RateRecord> record_from_json(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("device_name") || !j["device_name"].is_string() || !j.contains("rates") ||
        !j["rates"].is_array())
        return std::nullopt;
    RateRecord r;
    r.device_name = j["device_name"].get<std::string>();
    for (const auto& e : j["rates"]) {
        if (!e.is_object() || !e.contains("class") || !e["class"].is_string() || !e.contains("gflops") ||
            !e["gflops"].is_number())
            return std::nullopt;
        const auto kind = parse_compute_class(e["class"].get<std::string>());
        const double gflops = e["gflops"].get<double>();
        if (!kind || !is_tensor_class(*kind) || !(gflops > 0) || r.find(*kind)) return std::nullopt;
        r.rates.push_back({*kind, gflops, e.value("by", std::string()), e.value("at", std::string())});
    }
    return r;
}

}  // namespace

bool is_bounded_tensor_class(ComputeClass kind) {
    return std::find(std::begin(kBoundedTensorClasses), std::end(kBoundedTensorClasses), kind) !=
           std::end(kBoundedTensorClasses);
}

const ClassRate* RateRecord::find(ComputeClass kind) const {
    for (const auto& r : rates)
        if (r.kind == kind) return &r;
    return nullptr;
}

bool ratchet(RateRecord& record, const ClassRate& rate, const std::optional<Datasheet>& sheet) {
    if (!is_bounded_tensor_class(rate.kind) || !(rate.gflops > 0)) return false;
    if (const auto vendor = datasheet_figure(sheet, rate.kind); vendor && rate.gflops > kImplausibleFraction * *vendor)
        return false;
    for (auto& r : record.rates)
        if (r.kind == rate.kind) {
            if (!(rate.gflops > r.gflops)) return false;
            r = rate;
            return true;
        }
    record.rates.push_back(rate);
    return true;
}

RateRecord load_rate_record(const std::string& device_name) {
    RateRecord empty;
    empty.device_name = device_name;
    auto text = read_text_file(record_path(device_name));
    if (!text) return empty;
    auto r = record_from_json(nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false));
    // A file copied by hand from another model must not lend it its figures.
    if (!r || r->device_name != device_name) return empty;
    return std::move(*r);
}

Expected<void> store_rate_record(const RateRecord& record) {
    return write_file_atomic(record_path(record.device_name), to_json(record).dump(2) + "\n");
}

Expected<std::optional<Raised>> record_class_rate(const std::string& device_name, const ClassRate& rate,
                                                  const std::optional<Datasheet>& sheet) {
    RateRecord record = load_rate_record(device_name);
    const ClassRate* before = record.find(rate.kind);
    Raised raised{before ? before->gflops : 0.0, rate.gflops};
    ClassRate stamped = rate;
    if (stamped.at.empty()) stamped.at = utc_now_iso8601();
    if (!ratchet(record, stamped, sheet)) return std::optional<Raised>();
    if (auto stored = store_rate_record(record); !stored) return stored.error();
    return std::optional<Raised>(raised);
}

void bound_tensor_ceilings(Calibration& c, const RateRecord& record) {
    for (auto& t : c.tensor) {
        if (!is_bounded_tensor_class(t.kind)) continue;
        const char* name = compute_class_name(t.kind);
        const double own = t.source == CeilingSource::absent ? 0 : t.gflops;
        const double vendor = datasheet_figure(c.datasheet, t.kind).value_or(0);
        const ClassRate* fastest = record.find(t.kind);
        const double seen = fastest ? fastest->gflops : 0;
        const double bound = std::max({own, vendor, seen});
        if (!(bound > own)) continue;
        const std::string was = own > 0 ? fmt::format("{:.1f} TFLOP/s ({})", own * 1e-3, t.how) : "none";
        if (vendor >= seen) {
            t.source = CeilingSource::datasheet;
            t.how = fmt::format("the datasheet's dense {} figure ({}), above the fastest rate measured here; "
                                "measured: {}", name, c.datasheet->name, was);
        } else {
            t.source = CeilingSource::measured;
            t.how = fmt::format("the fastest {} rate kevo measured on this device model: {} at {}; the "
                                "calibration's own: {}", name, fastest->by, fastest->at, was);
        }
        t.gflops = bound;
    }
}

}  // namespace kevo
