#pragma once
// The compiled form of an Expression: a flat stack program. Kept private to src/ so the
// instruction set can change without touching the public header.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "gpuforecast/core/config.hpp"

namespace gpuforecast::detail {

enum class Op : std::uint8_t {
  Const,       // push consts[arg]
  Var,         // push variable arg
  Neg,
  Pos,
  Not,
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  Compare,     // sub = comparison kind; [a, b] -> [a op b]
  CompareKeep, // sub = comparison kind; [a, b] -> [b, a op b]   (chained comparisons)
  ChainFail,   // pop r; if r is false: replace top with False and jump to arg
  AndJump,     // top false: keep it, jump to arg; else pop
  OrJump,      // top true: keep it, jump to arg; else pop
  Index,       // [list, i] -> [list[i]]
  Call,        // sub = function, arg = argument count
};

enum class Cmp : std::uint8_t { Lt, Le, Gt, Ge, Eq, Ne };
enum class Fn : std::uint8_t { Min, Max, Abs, Int, Float, Len };

struct Instr {
  Op op;
  std::uint8_t sub = 0;
  std::uint32_t arg = 0;
  std::uint32_t column = 0;  // 1-based, for evaluation errors
};

enum class Kind : std::uint8_t { Int, Float, Str, List };

// One stack slot. Strings point into the program (literals) or into the caller's Values, and
// lists are indices into the program's bound lists, so a slot never owns memory. Trivial on
// purpose: the evaluator's stack array is then left uninitialised (every slot is written first).
struct Slot {
  Kind kind;
  union {
    std::int64_t i;
    double d;
    const std::string* s;
  };
};

struct ExpressionProgram {
  std::string source;
  std::vector<Instr> code;
  std::vector<Slot> consts;
  std::deque<std::string> strings;          // stable storage for string literals
  std::vector<std::vector<Value>> lists;    // bound lists, addressed by Slot::i
  std::vector<std::size_t> used;
  std::size_t variable_count = 0;
  std::size_t max_depth = 0;
};

}  // namespace gpuforecast::detail
