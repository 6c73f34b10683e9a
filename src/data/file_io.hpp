#pragma once
// Reading and writing whole files, gzip or plain, for the readers in src/data/.
#include <string>
#include <string_view>

#include "internal_api.hpp"

// Exported for the project's own programs (benchmarks read the peers' gzip records with it).
namespace gpuforecast GPUFORECAST_INTERNAL_API {
namespace detail::data {

// The bytes of `path`, inflated when they start with the gzip magic (1f 8b), whatever the name.
// Concatenated gzip members are joined. Throws input_error naming the file and the compressed
// byte offset when the file is missing, unreadable, corrupt or truncated.
[[nodiscard]] std::string read_maybe_gzip(const std::string& path);

// Inflates gzip bytes held in memory; `name` is used in error messages.
[[nodiscard]] std::string gunzip(std::string_view bytes, const std::string& name);
[[nodiscard]] bool is_gzip(std::string_view bytes) noexcept;

// Writes `text` to `path`, gzip-compressed when the path ends in ".gz". Writes to a temporary
// file beside it and renames, so a crash never leaves half a file under the real name.
void write_text(const std::string& path, std::string_view text);

[[nodiscard]] bool ends_with_gz(std::string_view path) noexcept;

}  // namespace detail::data
}  // namespace gpuforecast
