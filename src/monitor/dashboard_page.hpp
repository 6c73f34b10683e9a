#pragma once
// The dashboard page (src/monitor/dashboard.html, compiled in): one self-contained HTML file
// with its script and styles, no network fetches but its own /api/state. The static report is
// the same page with the state written into it, so it opens from disk without a server.
#include <string>
#include <string_view>

namespace gpuforecast::detail::monitor {

// The live page: it polls api/state every second until the state says finished.
[[nodiscard]] std::string_view dashboard_page() noexcept;
// The page with `state_json` (MonitorHub::state_json) embedded: it draws it and polls nothing.
[[nodiscard]] std::string static_report(std::string_view state_json);
// Writes static_report to `path`; gpuforecast::error naming the path if it cannot.
void write_static_report(const std::string& path, std::string_view state_json);

}  // namespace gpuforecast::detail::monitor
