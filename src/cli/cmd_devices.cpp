// `kevo devices`: every backend, the devices it found (or why none), with their ceilings.
#include <fmt/format.h>

#include "backend/device_info_json.hpp"
#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "eval/calibration.hpp"

namespace kevo::cli {

namespace {

// The ceilings a score on this device would use now: the cached measurement, or none yet (the
// first evaluation measures them). The datasheet is a cross-check, never the ceiling in force.
nlohmann::json ceilings_json(const DeviceInfo& info) {
    nlohmann::json j = {{"source", "none"}};
    if (auto c = load_cached_calibration(info)) {
        nlohmann::json tensor = nlohmann::json::array();
        for (const auto& t : ceilings_used(*c).tensor) tensor.push_back(t);
        j = {{"source", c->source}, {"bandwidth_gbs", c->bandwidth_gbs}, {"fp32_gflops", c->fp32_gflops},
             {"measured_at", c->measured_at}, {"stable", c->stable}, {"notes", c->notes}, {"tensor", std::move(tensor)}};
    }
    if (auto sheet = datasheet_for(info.name))
        j["datasheet"] = {{"name", sheet->name}, {"bandwidth_gbs", sheet->bandwidth_gbs}, {"fp32_gflops", sheet->fp32_gflops}};
    return j;
}

int run(bool json) {
    nlohmann::json doc = {{"backends", nlohmann::json::array()}};
    std::string text;
    for (const auto& name : backend_names()) {
        auto backend = make_backend(name);
        const auto devices = backend->probe();
        nlohmann::json b = {{"name", name}, {"language", language_name(backend->language())},
                            {"devices", nlohmann::json::array()}};
        if (devices.empty()) b["reason"] = backend->unavailable_reason();
        text += fmt::format("{} ({}): {}\n", name, language_name(backend->language()),
                            devices.empty() ? "no devices: " + backend->unavailable_reason()
                                            : fmt::format("{} device{}", devices.size(), devices.size() == 1 ? "" : "s"));
        for (const auto& d : devices) {
            nlohmann::json dj = to_json(d);
            dj["ceilings"] = ceilings_json(d);
            const auto& c = dj["ceilings"];
            text += fmt::format("  [{}] {} ({}; {} compute units, {} memory, {} last-level cache, driver {})\n", d.index,
                                d.name, d.is_cpu ? "CPU" : "GPU", d.compute_units, format_bytes(static_cast<double>(d.global_mem_bytes)),
                                format_bytes(static_cast<double>(d.l2_bytes)), d.driver);
            if (c.value("source", "none") == "none")
                text += "      ceilings: not measured yet (the first `kevo eval` measures them; `kevo calibrate` does a "
                        "fuller measurement)\n";
            else
                text += fmt::format("      ceilings (measured {}{}): {:.1f} GB/s, {:.1f} GFLOP/s\n",
                                    c["measured_at"].get<std::string>(), c["stable"].get<bool>() ? "" : ", UNSTABLE",
                                    c["bandwidth_gbs"].get<double>(), c["fp32_gflops"].get<double>());
            if (c.contains("tensor"))
                for (const auto& t : c["tensor"]) {
                    const std::string source = t["source"].get<std::string>();
                    text += source == "absent" ? fmt::format("      tensor {}: ABSENT\n", t["kind"].get<std::string>())
                                               : fmt::format("      tensor {}: {:.1f} TFLOP/s ({})\n", t["kind"].get<std::string>(),
                                                             t["gflops"].get<double>() * 1e-3,
                                                             source == "measured" ? "measured" : "DATASHEET, not measured");
                }
            if (c.contains("datasheet"))
                text += fmt::format("      datasheet ({}, a cross-check): {:.0f} GB/s, {:.0f} GFLOP/s\n", c["datasheet"]["name"].get<std::string>(),
                                    c["datasheet"]["bandwidth_gbs"].get<double>(), c["datasheet"]["fp32_gflops"].get<double>());
            b["devices"].push_back(std::move(dj));
        }
        doc["backends"].push_back(std::move(b));
    }
    if (json) print_json(doc);
    else say(false, text);
    return kExitOk;
}

}  // namespace

void setup_devices(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("devices", "backends and devices found, with their ceilings");
    auto json = std::make_shared<bool>(false);
    add_json_option(*cmd, *json);
    cmd->callback([&exit_code, json] { exit_code = run(*json); });
}

}  // namespace kevo::cli
