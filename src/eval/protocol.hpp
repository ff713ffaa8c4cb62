// The worker protocol's vocabulary: operations (parent -> worker), events (worker -> parent) and
// the stages of an evaluation, each an enum with one name table that both writes and reads it.
// One JSON object per line (eval/line_channel.hpp):
//   parent -> worker: {"op":"eval"|"compile","request":{...}} | {"op":"calibrate","quick":b}
//                     | {"op":"ceilings"} | {"op":"info"} | {"op":"quit"}
//   worker -> parent: {"event":"ready","device":{...}} | {"event":"fatal","error":"..."}
//                     | {"event":"stage","stage":"...","size":"...","trial":"...","launches":n}
//                     | {"event":"progress","message":"..."}
//                     | {"event":"result","result":{...},"poisoned":b} | {"event":"calibration",...}
//                     | {"event":"ceilings","calibration":{...}} | {"event":"info","device":{...}}
//                     | {"event":"error","error":"...","environment":true} (kevo's fault: no verdict)
// A name outside a table is a protocol error, never a default: a misspelt stage must not slip past
// the deadlines that depend on it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"

namespace kevo {

enum class Op { eval, compile, calibrate, ceilings, info, quit };

enum class Event { ready, fatal, stage, progress, result, calibration, ceilings, info, error };

// `start` is the parent's state before the worker names a stage; the rest are the worker's.
enum class Stage { start, lease, compile, reference, run, check, timing, timed_run, calibrate };

std::string_view name(Op op);
std::string_view name(Event event);
std::string_view name(Stage stage);
std::optional<Op> op_from_name(std::string_view text);
std::optional<Event> event_from_name(std::string_view text);
std::optional<Stage> stage_from_name(std::string_view text);

// JSON forms are the names (so {"op", Op::eval} builds a message).
void to_json(nlohmann::json& j, Op op);
void to_json(nlohmann::json& j, Event event);
void to_json(nlohmann::json& j, Stage stage);

// What a stage event carries: the stage, and where in the cascade it is.
struct StageEvent {
    StageEvent() = default;
    StageEvent(Stage stage_, std::string size_ = {}, std::string trial_ = {}, size_t launches_ = 0)
        : stage(stage_), size(std::move(size_)), trial(std::move(trial_)), launches(launches_) {}
    Stage stage = Stage::start;
    std::string size;     // a size label, or empty
    std::string trial;    // a trial name ("nominal", "outlier", "timed"), or empty
    size_t launches = 0;  // launches of a run stage; 0 when not one
    // "run at size 1M (nominal trial)".
    std::string describe() const;
};

// A request: {"op": op}.
nlohmann::json op_message(Op op);
// An event: {"event": event}.
nlohmann::json event_message(Event event);
nlohmann::json stage_message(const StageEvent& stage);

// The op of a request; an error when it is missing or unknown (the unknown name in the message).
Expected<Op> op_of(const nlohmann::json& message);

// An event as the parent reads it: its kind, and for a stage event the stage.
struct WorkerEvent {
    Event kind = Event::error;
    nlohmann::json body;
    std::optional<StageEvent> stage;  // set for Event::stage
};
// Errors name what was wrong ("the worker sent an unknown stage 'compil'").
Expected<WorkerEvent> read_event(nlohmann::json message);

}  // namespace kevo
