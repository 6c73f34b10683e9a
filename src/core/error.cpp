#include "gpuforecast/core/error.hpp"

#include <fmt/core.h>

namespace gpuforecast {

input_error::input_error(std::string file, std::string position, const std::string& message)
    : error(position.empty() ? fmt::format("{}: {}", file, message)
                             : fmt::format("{}:{}: {}", file, position, message)),
      m_file(std::move(file)),
      m_position(std::move(position)) {}

namespace {
std::string caret_message(const std::string& expression, std::size_t column, const std::string& message) {
  const std::size_t pad = column > 0 ? column - 1 : 0;
  return fmt::format("{} at column {} of expression\n  {}\n  {}^", message, column, expression,
                     std::string(pad, ' '));
}

std::string unknown_device_message(const std::string& name, const std::vector<std::string>& close) {
  std::string msg = fmt::format("unknown device \"{}\"", name);
  if (!close.empty()) {
    msg += "; close names:";
    for (const auto& c : close) msg += fmt::format(" \"{}\"", c);
  }
  msg += " (add devices with a JSON file: see docs/devices.md)";
  return msg;
}
}  // namespace

expression_error::expression_error(std::string expression, std::size_t column, const std::string& message)
    : error(caret_message(expression, column, message)), m_expression(std::move(expression)), m_column(column) {}

unknown_device_error::unknown_device_error(std::string name, std::vector<std::string> close_names)
    : error(unknown_device_message(name, close_names)), m_name(std::move(name)), m_close(std::move(close_names)) {}

invalid_configuration_error::invalid_configuration_error(std::size_t row, std::string parameter, std::string expected,
                                                         const std::string& message)
    : invalid_argument_error(message), m_row(row), m_parameter(std::move(parameter)), m_expected(std::move(expected)) {}

model_file_error::model_file_error(std::string file, const std::string& message)
    : error(fmt::format("{}: {}", file, message)), m_file(std::move(file)) {}

}  // namespace gpuforecast
