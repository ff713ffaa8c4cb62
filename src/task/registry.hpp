// The suite: every task folder under tasks/, found at configure time (cmake/task_registry.cmake
// generates the list, so adding a task touches no source file), with its embedded files.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/expected.hpp"
#include "task/task.hpp"

namespace kevo {

struct TaskEntry {
    std::string_view name;
    std::unique_ptr<Task> (*make)();
    std::string_view source_hash;  // hash of the task's C++ source: invalidates cached references
};

const std::vector<TaskEntry>& task_entries();
std::vector<std::string> task_names();  // in suite order
Expected<std::unique_ptr<Task>> make_task(const std::string& name);
std::string task_source_hash(const std::string& name);

// A file shipped in a task's folder (seed.cu, seed.cl, brief.md, best.cu); empty if absent.
std::string_view task_file(std::string_view task, std::string_view file);
// The tasks of the suite, in suite order, that ship `file` ("seed.py").
std::vector<std::string> tasks_shipping(std::string_view file);

}  // namespace kevo
