#pragma once
// Warnings: input that the library can use, but not as well as the user may expect (a device
// it has no numbers for). They go to one process-wide handler, standard error by default, so
// that every command and program reports them the same way without passing a logger around.
#include <functional>
#include <string>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

using WarningHandler = std::function<void(const std::string& message)>;

// Installs `handler` and returns the one it replaces. An empty handler restores the default,
// which prints "gpuforecast: warning: <message>" on standard error. Calls are serialised, so a
// handler need not be thread-safe (files are read on several threads).
WarningHandler set_warning_handler(WarningHandler handler);

// Passes `message` to the current handler.
void warn(const std::string& message);

}  // namespace gpuforecast
