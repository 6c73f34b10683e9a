#pragma once
// A parameter value in the binary archive (core/archive.cpp): a u32 tag (0 integer, 1 floating
// point, 2 string) and the value. Model files, feature vocabularies and the farm's job messages
// all write values this way.
#include <string>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/archive.hpp"

namespace gpuforecast::detail {

inline void write_value(ArchiveWriter& w, const Value& v) {
  if (v.is_int()) {
    w.u32(0);
    w.i64(v.as_int());
  } else if (v.is_float()) {
    w.u32(1);
    w.f64(v.as_double());
  } else {
    w.u32(2);
    w.str(v.as_string());
  }
}

// `unknown_tag`: the reader's failure for a tag other than 0, 1, 2 (it names the file and offset).
inline Value read_value(ArchiveReader& r, const std::string& unknown_tag) {
  switch (r.u32()) {
    case 0: return Value(r.i64());
    case 1: return Value(r.f64());
    case 2: return Value(r.str());
    default: r.fail(unknown_tag);
  }
}

}  // namespace gpuforecast::detail
