// See protocol.hpp. Each enum has one table; name() and *_from_name() both read it, so a value
// cannot be written under one spelling and read under another.
#include "eval/protocol.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace kevo {

namespace {

template <class E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

constexpr NameTable<Op, 6> kOps = {{
    {Op::eval, "eval"},
    {Op::compile, "compile"},
    {Op::calibrate, "calibrate"},
    {Op::ceilings, "ceilings"},
    {Op::info, "info"},
    {Op::quit, "quit"},
}};

constexpr NameTable<Event, 9> kEvents = {{
    {Event::ready, "ready"},
    {Event::fatal, "fatal"},
    {Event::stage, "stage"},
    {Event::progress, "progress"},
    {Event::result, "result"},
    {Event::calibration, "calibration"},
    {Event::ceilings, "ceilings"},
    {Event::info, "info"},
    {Event::error, "error"},
}};

constexpr NameTable<Stage, 9> kStages = {{
    {Stage::start, "start"},
    {Stage::lease, "lease"},
    {Stage::compile, "compile"},
    {Stage::reference, "reference"},
    {Stage::run, "run"},
    {Stage::check, "check"},
    {Stage::timing, "timing"},
    {Stage::timed_run, "timed_run"},
    {Stage::calibrate, "calibrate"},
}};

template <class E, size_t N>
std::string_view name_in(const NameTable<E, N>& table, E value) {
    for (const auto& [v, n] : table)
        if (v == value) return n;
    return "?";  // unreachable while every enumerator is in its table (tests/test_protocol.cpp)
}

template <class E, size_t N>
std::optional<E> value_in(const NameTable<E, N>& table, std::string_view text) {
    for (const auto& [v, n] : table)
        if (n == text) return v;
    return std::nullopt;
}

// A string member, or nullopt when it is missing or not a string.
std::optional<std::string> string_member(const nlohmann::json& message, const char* key) {
    if (!message.is_object()) return std::nullopt;
    auto it = message.find(key);
    if (it == message.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

}  // namespace

std::string_view name(Op op) { return name_in(kOps, op); }
std::string_view name(Event event) { return name_in(kEvents, event); }
std::string_view name(Stage stage) { return name_in(kStages, stage); }
std::optional<Op> op_from_name(std::string_view text) { return value_in(kOps, text); }
std::optional<Event> event_from_name(std::string_view text) { return value_in(kEvents, text); }
std::optional<Stage> stage_from_name(std::string_view text) { return value_in(kStages, text); }

void to_json(nlohmann::json& j, Op op) { j = std::string(name(op)); }
void to_json(nlohmann::json& j, Event event) { j = std::string(name(event)); }
void to_json(nlohmann::json& j, Stage stage) { j = std::string(name(stage)); }

std::string StageEvent::describe() const {
    std::string where(name(stage));
    if (!size.empty()) where += fmt::format(" at size {}", size);
    if (!trial.empty()) where += fmt::format(" ({} trial)", trial);
    return where;
}

nlohmann::json op_message(Op op) { return {{"op", op}}; }
nlohmann::json event_message(Event event) { return {{"event", event}}; }

nlohmann::json stage_message(const StageEvent& stage) {
    nlohmann::json e = event_message(Event::stage);
    e["stage"] = stage.stage;
    if (!stage.size.empty()) e["size"] = stage.size;
    if (!stage.trial.empty()) e["trial"] = stage.trial;
    if (stage.launches) e["launches"] = stage.launches;
    return e;
}

Expected<Op> op_of(const nlohmann::json& message) {
    const auto text = string_member(message, "op");
    if (!text) return make_error("a request without an op");
    const auto op = op_from_name(*text);
    if (!op) return make_error(fmt::format("unknown op '{}'", *text));
    return *op;
}

Expected<WorkerEvent> read_event(nlohmann::json message) {
    const auto text = string_member(message, "event");
    if (!text) return make_error(fmt::format("the worker sent a message without an event: {}", message.dump()));
    const auto kind = event_from_name(*text);
    if (!kind) return make_error(fmt::format("the worker sent an unknown event '{}'", *text));
    WorkerEvent event{*kind, std::move(message), std::nullopt};
    if (*kind == Event::stage) {
        const auto stage_text = string_member(event.body, "stage");
        if (!stage_text) return make_error("the worker sent a stage event without a stage");
        const auto stage = stage_from_name(*stage_text);
        if (!stage) return make_error(fmt::format("the worker sent an unknown stage '{}'", *stage_text));
        StageEvent s;
        s.stage = *stage;
        s.size = string_member(event.body, "size").value_or("");
        s.trial = string_member(event.body, "trial").value_or("");
        const auto launches = event.body.find("launches");
        if (launches != event.body.end() && launches->is_number() && launches->get<double>() > 0)
            s.launches = static_cast<size_t>(launches->get<double>());
        event.stage = std::move(s);
    }
    return event;
}

}  // namespace kevo
