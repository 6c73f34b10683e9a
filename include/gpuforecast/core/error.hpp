#pragma once
// Typed errors. Every error that stems from user input names where it came from
// (file and position, expression and column, or the candidate), so a user can fix it.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Base of every error the library throws on purpose.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Malformed, truncated or semantically wrong input file. `what()` reads
// "<file>:<position>: <message>"; position is a byte offset, a line, or a JSON path.
class input_error : public error {
 public:
  input_error(std::string file, std::string position, const std::string& message);
  [[nodiscard]] const std::string& get_file() const noexcept { return m_file; }
  [[nodiscard]] const std::string& get_position() const noexcept { return m_position; }

 private:
  std::string m_file;
  std::string m_position;
};

// A constraint or geometry expression that does not parse or cannot be evaluated.
// `what()` shows the expression and a caret under the (1-based) column.
class expression_error : public error {
 public:
  expression_error(std::string expression, std::size_t column, const std::string& message);
  [[nodiscard]] const std::string& get_expression() const noexcept { return m_expression; }
  [[nodiscard]] std::size_t get_column() const noexcept { return m_column; }

 private:
  std::string m_expression;
  std::size_t m_column;
};

// A device name that is neither built in nor registered; lists the closest known names.
class unknown_device_error : public error {
 public:
  unknown_device_error(std::string name, std::vector<std::string> close_names);
  [[nodiscard]] const std::string& get_name() const noexcept { return m_name; }
  [[nodiscard]] const std::vector<std::string>& get_close_names() const noexcept { return m_close; }

 private:
  std::string m_name;
  std::vector<std::string> m_close;
};

// A call with arguments outside their domain (alpha outside (0,1), empty calibration set, NaN).
class invalid_argument_error : public error {
 public:
  using error::error;
};

// A configuration that cannot be one of the kernel's (core/parameter_schema.hpp): a parameter
// missing, unknown or misspelt, a value of the wrong type, NaN, or outside what the parameter can
// take. `what()` reads "configuration <row> [<config>]: <message>".
class invalid_configuration_error : public invalid_argument_error {
 public:
  invalid_configuration_error(std::size_t row, std::string parameter, std::string expected, const std::string& message);
  [[nodiscard]] std::size_t get_row() const noexcept { return m_row; }
  // The parameter at fault ("" when the whole configuration is: empty, or of an unknown shape).
  [[nodiscard]] const std::string& get_parameter() const noexcept { return m_parameter; }
  // What was expected: the parameter names, or the values the parameter takes.
  [[nodiscard]] const std::string& get_expected() const noexcept { return m_expected; }

 private:
  std::size_t m_row;
  std::string m_parameter;
  std::string m_expected;
};

// A model file that is truncated, corrupted, or written by a newer format version.
class model_file_error : public error {
 public:
  model_file_error(std::string file, const std::string& message);
  [[nodiscard]] const std::string& get_file() const noexcept { return m_file; }

 private:
  std::string m_file;
};

// CUDA driver, NVRTC or CUPTI not available or failing outside a candidate's own fault.
class cuda_error : public error {
 public:
  using error::error;
};

}  // namespace gpuforecast
