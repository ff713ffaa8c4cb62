// The ceilings a worker scores against. They are measured on this device on first use and kept in
// memory (so an unwritable cache costs one measurement per worker, not one per candidate, and says
// so); they are measured again, once per worker, when a score comes out above what the device can
// do; the datasheet is used only when measuring fails, and every result then says so. A run or a
// study may pin its own ceilings for an evaluation: those are then used as they are, never re-measured.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "eval/calibration.hpp"

namespace kevo {

class CeilingKeeper {
public:
    // `on_calibrate` is told when a measurement starts (the parent keeps it off the candidate's
    // clock); `progress` gets the measurement's lines.
    CeilingKeeper(Device& device, std::function<void()> on_calibrate, std::function<void(const std::string&)> progress);

    // The ceilings in force, measuring (or, failing that, reading the datasheet) when there are none.
    Expected<const Calibration*> current();
    // Measures again, at most once per worker; null when it was not done (already done, or failed).
    const Calibration* remeasure(const std::string& why);
    // A measurement made elsewhere (`kevo calibrate` through this worker) replaces the one in force.
    void adopt(Calibration measured);
    // Ceilings pinned by the run or study being evaluated (nullopt: none): while set, they are the
    // ones in force and are never re-measured, so that every figure of the run divides by the same.
    void pin(std::optional<Calibration> pinned);

    // What every result scored against these ceilings must say (datasheet in use, cache unwritable,
    // unstable passes, a re-measurement).
    std::vector<std::string> warnings() const;

private:
    Device& device_;
    std::function<void()> on_calibrate_;
    std::function<void(const std::string&)> progress_;
    std::optional<Calibration> in_force_;
    std::optional<Calibration> pinned_;
    std::vector<std::string> warnings_;  // about how in_force_ was obtained
    std::vector<std::string> pinned_warnings_;  // this evaluation's, under pinned_
    bool remeasured_ = false;

    Expected<Calibration> measure_and_store();
};

}  // namespace kevo
