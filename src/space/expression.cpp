// Tokenizer, recursive-descent compiler and stack evaluator of the T1 `Conditions` language.
// Python semantics throughout, checked against CPython by tests/space/expression_test.cpp.
#include "gpuforecast/space/expression.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include "gpuforecast/core/error.hpp"
#include "space/expression_program.hpp"

namespace gpuforecast {

using detail::Cmp;
using detail::ExpressionProgram;
using detail::Fn;
using detail::Instr;
using detail::Kind;
using detail::Op;
using detail::Slot;

namespace {

// ----------------------------------------------------------------------------- tokens

enum class Tok { Int, Float, Str, Name, Op, LParen, RParen, LBracket, RBracket, Comma, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // operator or name spelling; decoded string for Str
  std::size_t column = 0;
  std::int64_t ival = 0;
  double fval = 0;
};

std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

std::vector<Token> tokenize(const std::string& src) {
  std::vector<Token> out;
  std::size_t i = 0;
  const std::size_t n = src.size();
  auto fail = [&](std::size_t pos, const std::string& msg) -> void { throw expression_error(src, pos + 1, msg); };
  while (i < n) {
    const char c = src[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.column = i + 1;
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(src[i + 1])))) {
      std::size_t j = i;
      bool is_float = false;
      if (c == '0' && j + 1 < n && (src[j + 1] == 'x' || src[j + 1] == 'X')) {
        j += 2;
        const std::size_t digits = j;
        while (j < n && std::isxdigit(static_cast<unsigned char>(src[j]))) ++j;
        if (j == digits) fail(i, "invalid hexadecimal literal");
        std::uint64_t v = 0;
        auto [p, ec] = std::from_chars(src.data() + digits, src.data() + j, v, 16);
        if (ec != std::errc() || v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          fail(i, "integer literal too large");
        t.kind = Tok::Int;
        t.ival = static_cast<std::int64_t>(v);
      } else {
        while (j < n && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        if (j < n && src[j] == '.') {
          is_float = true;
          ++j;
          while (j < n && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        }
        if (j < n && (src[j] == 'e' || src[j] == 'E')) {
          std::size_t k = j + 1;
          if (k < n && (src[k] == '+' || src[k] == '-')) ++k;
          if (k < n && std::isdigit(static_cast<unsigned char>(src[k]))) {
            is_float = true;
            j = k;
            while (j < n && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
          } else {
            fail(i, "invalid number literal");
          }
        }
        const std::string text = src.substr(i, j - i);
        if (is_float) {
          t.kind = Tok::Float;
          t.fval = std::strtod(text.c_str(), nullptr);
        } else {
          // Python rejects leading zeros in decimal integers ("012"), except for zero itself.
          if (text.size() > 1 && text[0] == '0' && text.find_first_not_of('0') != std::string::npos)
            fail(i, "leading zeros in a decimal integer literal are not permitted");
          auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), t.ival);
          if (ec != std::errc()) fail(i, "integer literal too large");
          t.kind = Tok::Int;
        }
      }
      if (j < n && (std::isalpha(static_cast<unsigned char>(src[j])) || src[j] == '_'))
        fail(j, "invalid number literal");
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < n && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
      t.kind = Tok::Name;
      t.text = src.substr(i, j - i);
      i = j;
    } else if (c == '\'' || c == '"') {
      std::size_t j = i + 1;
      std::string s;
      bool closed = false;
      while (j < n) {
        if (src[j] == c) {
          closed = true;
          ++j;
          break;
        }
        if (src[j] == '\\' && j + 1 < n) {
          const char e = src[j + 1];
          switch (e) {
            case 'n': s += '\n'; break;
            case 't': s += '\t'; break;
            case '\\': s += '\\'; break;
            case '\'': s += '\''; break;
            case '"': s += '"'; break;
            default: s += '\\'; s += e; break;
          }
          j += 2;
          continue;
        }
        s += src[j++];
      }
      if (!closed) fail(i, "unterminated string literal");
      t.kind = Tok::Str;
      t.text = std::move(s);
      i = j;
    } else {
      static const char* const two[] = {"//", "**", "<=", ">=", "==", "!="};
      std::string op;
      for (const char* o : two)
        if (src.compare(i, 2, o) == 0) op = o;
      if (op.empty()) {
        switch (c) {
          case '+': case '-': case '*': case '/': case '%': case '<': case '>': op = std::string(1, c); break;
          case '(': t.kind = Tok::LParen; break;
          case ')': t.kind = Tok::RParen; break;
          case '[': t.kind = Tok::LBracket; break;
          case ']': t.kind = Tok::RBracket; break;
          case ',': t.kind = Tok::Comma; break;
          default: fail(i, fmt::format("unexpected character {}", printable(c)));
        }
        if (op.empty()) {
          t.text = std::string(1, c);
          ++i;
          out.push_back(std::move(t));
          continue;
        }
      }
      t.kind = Tok::Op;
      t.text = op;
      i += op.size();
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Tok::End;
  end.column = n + 1;
  out.push_back(end);
  return out;
}

// ----------------------------------------------------------------------------- compiler

// Evaluates a constant snippet (Consts followed by one operation) at compile time; false if it
// raises, in which case the snippet stays and raises at evaluation, at the right column.
bool fold_constant(const ExpressionProgram& prog, const Instr* code, std::size_t n, Slot& out);

constexpr int kMaxNesting = 200;  // deeper input is rejected rather than overflowing the C++ stack

class Compiler {
 public:
  Compiler(ExpressionProgram& prog, std::span<const std::string> variables, std::span<const ListBinding> lists)
      : m_prog(prog), m_variables(variables), m_lists(lists), m_tokens(tokenize(prog.source)) {}

  void compile() {
    if (peek().kind == Tok::End) fail(peek().column, "empty expression");
    parse_or();
    if (peek().kind != Tok::End) {
      if (peek().kind == Tok::RParen) fail(peek().column, "unbalanced parenthesis: ')' without a matching '('");
      if (peek().kind == Tok::RBracket) fail(peek().column, "unbalanced bracket: ']' without a matching '['");
      fail(peek().column, fmt::format("unexpected {}", describe(peek())));
    }
    m_prog.max_depth = m_max_depth;
    std::sort(m_prog.used.begin(), m_prog.used.end());
    m_prog.used.erase(std::unique(m_prog.used.begin(), m_prog.used.end()), m_prog.used.end());
  }

 private:
  [[noreturn]] void fail(std::size_t column, const std::string& msg) const {
    throw expression_error(m_prog.source, column, msg);
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of expression";
      case Tok::Str: return "string literal";
      case Tok::Int:
      case Tok::Float: return "number";
      case Tok::Name: return fmt::format("name '{}'", t.text);
      default: return fmt::format("'{}'", t.text);
    }
  }

  const Token& peek() const { return m_tokens[m_pos]; }
  const Token& next() { return m_tokens[m_pos++]; }
  bool at_op(const char* op) const { return peek().kind == Tok::Op && peek().text == op; }
  bool at_name(const char* name) const { return peek().kind == Tok::Name && peek().text == name; }

  // Emits and tracks the stack depth: `effect` is pushes minus pops.
  std::size_t emit(Op op, int effect, std::size_t column, std::uint32_t arg = 0, std::uint8_t sub = 0) {
    m_prog.code.push_back(Instr{op, sub, arg, static_cast<std::uint32_t>(column)});
    m_depth += effect;
    m_max_depth = std::max(m_max_depth, static_cast<std::size_t>(std::max(m_depth, 0)));
    fold();
    return m_prog.code.size() - 1;
  }
  // A jump target is a barrier: constants before it must not be folded into what follows.
  void patch(std::size_t at) {
    m_prog.code[at].arg = static_cast<std::uint32_t>(m_prog.code.size());
    m_barrier = m_prog.code.size();
  }

  // Constant folding: an operation whose operands are all constants becomes one constant
  // (`12*1024`, `ProblemSize[0]*ProblemSize[1]` with a bound list).
  void fold() {
    auto& code = m_prog.code;
    const Instr last = code.back();
    std::size_t operands = 0;
    switch (last.op) {
      case Op::Neg: case Op::Pos: case Op::Not: operands = 1; break;
      case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::FloorDiv: case Op::Mod: case Op::Pow:
      case Op::Compare: case Op::Index: operands = 2; break;
      case Op::Call: operands = last.arg; break;
      default: return;
    }
    if (operands == 0 || operands > 8 || code.size() < operands + 1) return;
    const std::size_t first = code.size() - 1 - operands;
    if (first < m_barrier) return;
    for (std::size_t k = first; k + 1 < code.size(); ++k)
      if (code[k].op != Op::Const) return;
    Slot result;
    if (!fold_constant(m_prog, code.data() + first, operands + 1, result)) return;
    const std::uint32_t column = code[first].column;
    code.resize(first);
    m_prog.consts.push_back(result);
    code.push_back(Instr{Op::Const, 0, static_cast<std::uint32_t>(m_prog.consts.size() - 1), column});
  }

  void push_const(Slot s, std::size_t column) {
    m_prog.consts.push_back(s);
    emit(Op::Const, 1, column, static_cast<std::uint32_t>(m_prog.consts.size() - 1));
  }

  struct Nest {
    explicit Nest(Compiler& c, std::size_t column) : m_c(c) {
      if (++m_c.m_nesting > kMaxNesting) m_c.fail(column, "expression nested too deeply");
    }
    ~Nest() { --m_c.m_nesting; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    Compiler& m_c;
  };

  void parse_or() {
    Nest guard(*this, peek().column);
    parse_and();
    std::vector<std::size_t> jumps;
    while (at_name("or")) {
      const auto col = next().column;
      jumps.push_back(emit(Op::OrJump, -1, col));  // depth after the fall-through pop
      parse_and();
    }
    for (auto j : jumps) patch(j);
  }

  void parse_and() {
    parse_not();
    std::vector<std::size_t> jumps;
    while (at_name("and")) {
      const auto col = next().column;
      jumps.push_back(emit(Op::AndJump, -1, col));
      parse_not();
    }
    for (auto j : jumps) patch(j);
  }

  void parse_not() {
    if (at_name("not")) {
      const auto col = next().column;
      Nest guard(*this, col);
      parse_not();
      emit(Op::Not, 0, col);
      return;
    }
    parse_comparison();
  }

  std::optional<Cmp> comparison_op() const {
    if (peek().kind != Tok::Op) return std::nullopt;
    const auto& t = peek().text;
    if (t == "<") return Cmp::Lt;
    if (t == "<=") return Cmp::Le;
    if (t == ">") return Cmp::Gt;
    if (t == ">=") return Cmp::Ge;
    if (t == "==") return Cmp::Eq;
    if (t == "!=") return Cmp::Ne;
    return std::nullopt;
  }

  void parse_comparison() {
    parse_arith();
    auto op = comparison_op();
    if (!op) return;
    std::vector<std::size_t> fails;
    while (true) {
      const auto col = next().column;
      parse_arith();
      auto following = comparison_op();
      if (!following) {
        emit(Op::Compare, -1, col, 0, static_cast<std::uint8_t>(*op));
        break;
      }
      emit(Op::CompareKeep, 0, col, 0, static_cast<std::uint8_t>(*op));
      fails.push_back(emit(Op::ChainFail, -1, col));
      op = following;
    }
    for (auto f : fails) patch(f);
  }

  void parse_arith() {
    parse_term();
    while (at_op("+") || at_op("-")) {
      const Token& t = next();
      const Op op = t.text == "+" ? Op::Add : Op::Sub;
      const auto col = t.column;
      parse_term();
      emit(op, -1, col);
    }
  }

  void parse_term() {
    parse_factor();
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      const Token& t = next();
      const Op op = t.text == "*" ? Op::Mul : t.text == "/" ? Op::Div : t.text == "//" ? Op::FloorDiv : Op::Mod;
      const auto col = t.column;
      parse_factor();
      emit(op, -1, col);
    }
  }

  void parse_factor() {
    if (at_op("-") || at_op("+")) {
      const Token& t = next();
      const Op op = t.text == "-" ? Op::Neg : Op::Pos;
      const auto col = t.column;
      Nest guard(*this, col);
      parse_factor();
      emit(op, 0, col);
      return;
    }
    parse_power();
  }

  void parse_power() {
    parse_primary();
    if (at_op("**")) {
      const auto col = next().column;
      Nest guard(*this, col);
      parse_factor();  // right-associative; binds tighter than a unary minus on its left
      emit(Op::Pow, -1, col);
    }
  }

  void parse_primary() {
    parse_atom();
    while (peek().kind == Tok::LBracket) {
      const auto col = next().column;
      parse_or();
      if (peek().kind != Tok::RBracket) {
        if (peek().kind == Tok::End) fail(col, "unbalanced bracket: '[' is never closed");
        fail(peek().column, fmt::format("expected ']' but found {}", describe(peek())));
      }
      next();
      emit(Op::Index, -1, col);
    }
  }

  void parse_atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Int: {
        Slot s;
        s.kind = Kind::Int;
        s.i = t.ival;
        next();
        push_const(s, t.column);
        return;
      }
      case Tok::Float: {
        Slot s;
        s.kind = Kind::Float;
        s.d = t.fval;
        next();
        push_const(s, t.column);
        return;
      }
      case Tok::Str: {
        m_prog.strings.push_back(t.text);
        Slot s;
        s.kind = Kind::Str;
        s.s = &m_prog.strings.back();
        next();
        push_const(s, t.column);
        return;
      }
      case Tok::LParen: {
        const auto col = next().column;
        parse_or();
        if (peek().kind != Tok::RParen) {
          if (peek().kind == Tok::End) fail(col, "unbalanced parenthesis: '(' is never closed");
          fail(peek().column, fmt::format("expected ')' but found {}", describe(peek())));
        }
        next();
        return;
      }
      case Tok::Name: parse_name(); return;
      case Tok::End: fail(t.column, "unexpected end of expression");
      case Tok::RParen: fail(t.column, "unbalanced parenthesis: ')' without a matching '('");
      default: fail(t.column, fmt::format("unexpected {}", describe(t)));
    }
  }

  void parse_name() {
    const Token t = next();
    const std::string& name = t.text;
    if (name == "True" || name == "False") {
      Slot s;
      s.kind = Kind::Int;
      s.i = name == "True" ? 1 : 0;
      push_const(s, t.column);
      return;
    }
    if (name == "and" || name == "or" || name == "not")
      fail(t.column, fmt::format("unexpected keyword '{}'", name));
    const bool call = peek().kind == Tok::LParen;
    if (call) {
      static const std::pair<const char*, Fn> fns[] = {{"min", Fn::Min}, {"max", Fn::Max}, {"abs", Fn::Abs},
                                                      {"int", Fn::Int}, {"float", Fn::Float}, {"len", Fn::Len}};
      for (const auto& [fname, fn] : fns) {
        if (name != fname) continue;
        const auto open = next().column;
        std::uint32_t argc = 0;
        if (peek().kind != Tok::RParen) {
          while (true) {
            parse_or();
            ++argc;
            if (peek().kind == Tok::Comma) {
              next();
              if (peek().kind == Tok::RParen) break;  // trailing comma, as Python allows
              continue;
            }
            break;
          }
        }
        if (peek().kind != Tok::RParen) {
          if (peek().kind == Tok::End) fail(open, "unbalanced parenthesis: '(' is never closed");
          fail(peek().column, fmt::format("expected ',' or ')' but found {}", describe(peek())));
        }
        next();
        const bool minmax = fn == Fn::Min || fn == Fn::Max;
        if ((minmax && argc == 0) || (!minmax && argc != 1))
          fail(t.column, fmt::format("{}() takes {} but {} were given", name,
                                     minmax ? "at least 1 argument" : "exactly 1 argument", argc));
        emit(Op::Call, 1 - static_cast<int>(argc), t.column, argc, static_cast<std::uint8_t>(fn));
        return;
      }
    }
    for (std::size_t i = 0; i < m_variables.size(); ++i) {
      if (m_variables[i] == name) {
        m_prog.used.push_back(i);
        emit(Op::Var, 1, t.column, static_cast<std::uint32_t>(i));
        return;
      }
    }
    for (std::size_t i = 0; i < m_lists.size(); ++i) {
      if (m_lists[i].name == name) {
        Slot s;
        s.kind = Kind::List;
        s.i = static_cast<std::int64_t>(m_prog.lists.size());
        m_prog.lists.push_back(m_lists[i].values);
        push_const(s, t.column);
        return;
      }
    }
    if (call) fail(t.column, fmt::format("unknown function '{}' (known: min, max, abs, int, float, len)", name));
    fail(t.column, fmt::format("unknown name '{}'", name));
  }

  ExpressionProgram& m_prog;
  std::span<const std::string> m_variables;
  std::span<const ListBinding> m_lists;
  std::vector<Token> m_tokens;
  std::size_t m_pos = 0;
  int m_depth = 0;
  std::size_t m_max_depth = 0;
  std::size_t m_barrier = 0;
  int m_nesting = 0;
};

// ----------------------------------------------------------------------------- evaluator

const char* type_name(Kind k) {
  switch (k) {
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::List: return "list";
  }
  return "?";
}

class Machine {
 public:
  explicit Machine(const ExpressionProgram& p) : m_p(p) {}

  [[noreturn]] void fail(const Instr& in, const std::string& msg) const {
    throw expression_error(m_p.source, in.column, msg);
  }

  static Slot make_int(std::int64_t v) {
    Slot s;
    s.kind = Kind::Int;
    s.i = v;
    return s;
  }
  static Slot make_float(double v) {
    Slot s;
    s.kind = Kind::Float;
    s.d = v;
    return s;
  }
  static bool is_num(const Slot& s) { return s.kind == Kind::Int || s.kind == Kind::Float; }
  static double num(const Slot& s) { return s.kind == Kind::Int ? static_cast<double>(s.i) : s.d; }

  bool truthy(const Slot& s) const {
    switch (s.kind) {
      case Kind::Int: return s.i != 0;
      case Kind::Float: return s.d != 0.0;
      case Kind::Str: return !s.s->empty();
      case Kind::List: return !m_p.lists[static_cast<std::size_t>(s.i)].empty();
    }
    return false;
  }

  static Slot from_value(const Value& v) {
    if (v.is_int()) return make_int(v.as_int());
    if (v.is_float()) return make_float(v.as_double());
    Slot s;
    s.kind = Kind::Str;
    s.s = &v.as_string();
    return s;
  }

  void need_numbers(const Instr& in, const Slot& a, const Slot& b, const char* op) const {
    if (!is_num(a) || !is_num(b))
      fail(in, fmt::format("unsupported operand types for {}: '{}' and '{}'", op, type_name(a.kind), type_name(b.kind)));
  }

  Slot arith(const Instr& in, const Slot& a, const Slot& b) const {
    const bool ints = a.kind == Kind::Int && b.kind == Kind::Int;
    switch (in.op) {
      case Op::Add: {
        need_numbers(in, a, b, "+");
        if (ints) {
          std::int64_t r;
          if (__builtin_add_overflow(a.i, b.i, &r)) fail(in, "integer overflow");
          return make_int(r);
        }
        return make_float(num(a) + num(b));
      }
      case Op::Sub: {
        need_numbers(in, a, b, "-");
        if (ints) {
          std::int64_t r;
          if (__builtin_sub_overflow(a.i, b.i, &r)) fail(in, "integer overflow");
          return make_int(r);
        }
        return make_float(num(a) - num(b));
      }
      case Op::Mul: {
        need_numbers(in, a, b, "*");
        if (ints) {
          std::int64_t r;
          if (__builtin_mul_overflow(a.i, b.i, &r)) fail(in, "integer overflow");
          return make_int(r);
        }
        return make_float(num(a) * num(b));
      }
      case Op::Div: {
        need_numbers(in, a, b, "/");
        if (num(b) == 0.0) fail(in, "division by zero");
        return make_float(num(a) / num(b));
      }
      case Op::FloorDiv: {
        need_numbers(in, a, b, "//");
        if (ints) {
          if (b.i == 0) fail(in, "integer division by zero");
          if (b.i == -1) {
            if (a.i == std::numeric_limits<std::int64_t>::min()) fail(in, "integer overflow");
            return make_int(-a.i);
          }
          std::int64_t q = a.i / b.i;
          if ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0))) --q;
          return make_int(q);
        }
        const double x = num(a), y = num(b);
        if (y == 0.0) fail(in, "float floor division by zero");
        return make_float(py_float_floordiv(x, y));
      }
      case Op::Mod: {
        need_numbers(in, a, b, "%");
        if (ints) {
          if (b.i == 0) fail(in, "integer modulo by zero");
          if (b.i == -1) return make_int(0);
          std::int64_t r = a.i % b.i;
          if (r != 0 && ((r < 0) != (b.i < 0))) r += b.i;
          return make_int(r);
        }
        const double x = num(a), y = num(b);
        if (y == 0.0) fail(in, "float modulo by zero");
        return make_float(py_float_mod(x, y));
      }
      case Op::Pow: {
        need_numbers(in, a, b, "**");
        if (ints && b.i >= 0) {
          std::int64_t result = 1, base = a.i, e = b.i;
          while (e > 0) {
            if (e & 1)
              if (__builtin_mul_overflow(result, base, &result)) fail(in, "integer overflow");
            e >>= 1;
            if (e > 0 && __builtin_mul_overflow(base, base, &base)) fail(in, "integer overflow");
          }
          return make_int(result);
        }
        const double x = num(a), y = num(b);
        if (x == 0.0 && y < 0.0) fail(in, "zero cannot be raised to a negative power");
        if (x < 0.0 && std::floor(y) != y && std::isfinite(y))
          fail(in, "negative number raised to a fractional power (complex result)");
        const double r = std::pow(x, y);
        if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail(in, "numerical result out of range");
        return make_float(r);
      }
      default: break;
    }
    fail(in, "internal error: not an arithmetic instruction");
  }

  // CPython's float floor division and modulo (Objects/floatobject.c, float_divmod).
  static double py_float_mod(double x, double y) {
    double mod = std::fmod(x, y);
    if (mod != 0.0) {
      if ((y < 0) != (mod < 0)) mod += y;
    } else {
      mod = std::copysign(0.0, y);
    }
    return mod;
  }
  static double py_float_floordiv(double x, double y) {
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0.0 && ((y < 0) != (mod < 0))) div -= 1.0;
    double floordiv;
    if (div != 0.0) {
      floordiv = std::floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
      floordiv = std::copysign(0.0, x / y);
    }
    return floordiv;
  }

  bool compare(const Instr& in, Cmp c, const Slot& a, const Slot& b) const {
    if (a.kind == Kind::Int && b.kind == Kind::Int) return cmp_result(c, a.i <=> b.i);
    if (is_num(a) && is_num(b)) {
      const auto o = num(a) <=> num(b);
      if (o == std::partial_ordering::unordered) return c == Cmp::Ne;
      return cmp_result(c, o);
    }
    if (a.kind == Kind::Str && b.kind == Kind::Str) return cmp_result(c, *a.s <=> *b.s);
    if (c == Cmp::Eq) return false;
    if (c == Cmp::Ne) return true;
    fail(in, fmt::format("comparison not supported between '{}' and '{}'", type_name(a.kind), type_name(b.kind)));
  }

  template <class O>
  static bool cmp_result(Cmp c, O o) {
    switch (c) {
      case Cmp::Lt: return o < 0;
      case Cmp::Le: return o <= 0;
      case Cmp::Gt: return o > 0;
      case Cmp::Ge: return o >= 0;
      case Cmp::Eq: return o == 0;
      case Cmp::Ne: return o != 0;
    }
    return false;
  }

  Slot call(const Instr& in, Slot* args, std::uint32_t argc) const {
    const auto fn = static_cast<Fn>(in.sub);
    switch (fn) {
      case Fn::Min:
      case Fn::Max: {
        const Cmp better = fn == Fn::Min ? Cmp::Lt : Cmp::Gt;
        if (argc == 1) {
          if (args[0].kind != Kind::List) fail(in, fmt::format("'{}' object is not iterable", type_name(args[0].kind)));
          const auto& list = m_p.lists[static_cast<std::size_t>(args[0].i)];
          if (list.empty()) fail(in, fmt::format("{}() arg is an empty sequence", fn == Fn::Min ? "min" : "max"));
          Slot best = from_value(list[0]);
          for (std::size_t k = 1; k < list.size(); ++k) {
            const Slot s = from_value(list[k]);
            if (compare(in, better, s, best)) best = s;
          }
          return best;
        }
        Slot best = args[0];
        for (std::uint32_t k = 1; k < argc; ++k)
          if (compare(in, better, args[k], best)) best = args[k];
        return best;
      }
      case Fn::Abs: {
        const Slot& a = args[0];
        if (a.kind == Kind::Int) {
          if (a.i == std::numeric_limits<std::int64_t>::min()) fail(in, "integer overflow");
          return make_int(a.i < 0 ? -a.i : a.i);
        }
        if (a.kind == Kind::Float) return make_float(std::fabs(a.d));
        fail(in, fmt::format("bad operand type for abs(): '{}'", type_name(a.kind)));
      }
      case Fn::Int: {
        const Slot& a = args[0];
        if (a.kind == Kind::Int) return a;
        if (a.kind == Kind::Float) {
          if (!std::isfinite(a.d)) fail(in, "cannot convert a non-finite float to an integer");
          const double t = std::trunc(a.d);
          if (t < -9.2233720368547758e18 || t >= 9.2233720368547758e18) fail(in, "integer overflow");
          return make_int(static_cast<std::int64_t>(t));
        }
        if (a.kind == Kind::Str) {
          const std::string s = trim(*a.s);
          std::int64_t v = 0;
          const char* b = s.data();
          const char* e = s.data() + s.size();
          if (b != e && *b == '+') ++b;
          auto [p, ec] = std::from_chars(b, e, v);
          if (s.empty() || ec != std::errc() || p != e)
            fail(in, fmt::format("invalid literal for int() with base 10: '{}'", *a.s));
          return make_int(v);
        }
        fail(in, "int() argument must be a string or a number, not 'list'");
      }
      case Fn::Float: {
        const Slot& a = args[0];
        if (is_num(a)) return make_float(num(a));
        if (a.kind == Kind::Str) {
          const std::string s = trim(*a.s);
          double v = 0;
          const char* b = s.data();
          const char* e = s.data() + s.size();
          if (b != e && *b == '+') ++b;
          auto [p, ec] = std::from_chars(b, e, v);
          if (s.empty() || ec != std::errc() || p != e)
            fail(in, fmt::format("could not convert string to float: '{}'", *a.s));
          return make_float(v);
        }
        fail(in, "float() argument must be a string or a number, not 'list'");
      }
      case Fn::Len: {
        const Slot& a = args[0];
        if (a.kind == Kind::List) return make_int(static_cast<std::int64_t>(m_p.lists[static_cast<std::size_t>(a.i)].size()));
        if (a.kind == Kind::Str) return make_int(static_cast<std::int64_t>(a.s->size()));
        fail(in, fmt::format("object of type '{}' has no len()", type_name(a.kind)));
      }
    }
    fail(in, "internal error: unknown function");
  }

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\n\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\n\r");
    return s.substr(b, e - b + 1);
  }

  Slot index(const Instr& in, const Slot& container, const Slot& idx) const {
    if (container.kind != Kind::List) fail(in, fmt::format("'{}' object is not subscriptable", type_name(container.kind)));
    if (idx.kind != Kind::Int) fail(in, fmt::format("list indices must be integers, not '{}'", type_name(idx.kind)));
    const auto& list = m_p.lists[static_cast<std::size_t>(container.i)];
    std::int64_t k = idx.i;
    const auto size = static_cast<std::int64_t>(list.size());
    if (k < 0) k += size;
    if (k < 0 || k >= size) fail(in, "list index out of range");
    return from_value(list[static_cast<std::size_t>(k)]);
  }

  template <class Load>
  Slot run(Load&& load) const {
    return run(std::forward<Load>(load), m_p.code.data(), m_p.code.size());
  }

  template <class Load>
  Slot run(Load&& load, const Instr* code, const std::size_t n) const {
    constexpr std::size_t kInline = 32;
    Slot inline_stack[kInline];
    inline_stack[0] = make_int(0);  // a program always pushes first; this only quiets -Wmaybe-uninitialized
    std::vector<Slot> heap;
    Slot* stack = inline_stack;
    if (m_p.max_depth > kInline) {
      heap.resize(m_p.max_depth);
      stack = heap.data();
    }
    std::size_t sp = 0;  // number of slots in use
    std::size_t pc = 0;
    while (pc < n) {
      const Instr& in = code[pc];
      switch (in.op) {
        case Op::Const: stack[sp++] = m_p.consts[in.arg]; break;
        case Op::Var: stack[sp++] = load(in.arg); break;
        case Op::Neg: {
          Slot& a = stack[sp - 1];
          if (a.kind == Kind::Int) {
            if (a.i == std::numeric_limits<std::int64_t>::min()) fail(in, "integer overflow");
            a.i = -a.i;
          } else if (a.kind == Kind::Float) {
            a.d = -a.d;
          } else {
            fail(in, fmt::format("bad operand type for unary -: '{}'", type_name(a.kind)));
          }
          break;
        }
        case Op::Pos:
          if (!is_num(stack[sp - 1])) fail(in, fmt::format("bad operand type for unary +: '{}'", type_name(stack[sp - 1].kind)));
          break;
        case Op::Not: stack[sp - 1] = make_int(truthy(stack[sp - 1]) ? 0 : 1); break;
        case Op::Add:
        case Op::Sub:
        case Op::Mul: {
          // The common all-integer case inline; everything else through arith().
          Slot& a = stack[sp - 2];
          const Slot& b = stack[sp - 1];
          if (a.kind == Kind::Int && b.kind == Kind::Int) {
            std::int64_t r;
            const bool over = in.op == Op::Add   ? __builtin_add_overflow(a.i, b.i, &r)
                              : in.op == Op::Sub ? __builtin_sub_overflow(a.i, b.i, &r)
                                                 : __builtin_mul_overflow(a.i, b.i, &r);
            if (over) fail(in, "integer overflow");
            a.i = r;
          } else {
            a = arith(in, a, b);
          }
          --sp;
          break;
        }
        case Op::Div:
        case Op::FloorDiv:
        case Op::Mod:
        case Op::Pow:
          stack[sp - 2] = arith(in, stack[sp - 2], stack[sp - 1]);
          --sp;
          break;
        case Op::Compare: {
          Slot& a = stack[sp - 2];
          const Slot& b = stack[sp - 1];
          const bool r = (a.kind == Kind::Int && b.kind == Kind::Int) ? cmp_result(static_cast<Cmp>(in.sub), a.i <=> b.i)
                                                                    : compare(in, static_cast<Cmp>(in.sub), a, b);
          a = make_int(r ? 1 : 0);
          --sp;
          break;
        }
        case Op::CompareKeep: {
          const Slot a = stack[sp - 2];
          const Slot b = stack[sp - 1];
          stack[sp - 2] = b;
          stack[sp - 1] = make_int(compare(in, static_cast<Cmp>(in.sub), a, b) ? 1 : 0);
          break;
        }
        case Op::ChainFail: {
          const bool ok = stack[--sp].i != 0;
          if (!ok) {
            stack[sp - 1] = make_int(0);
            pc = in.arg;
            continue;
          }
          break;
        }
        case Op::AndJump:
          if (!truthy(stack[sp - 1])) {
            pc = in.arg;
            continue;
          }
          --sp;
          break;
        case Op::OrJump:
          if (truthy(stack[sp - 1])) {
            pc = in.arg;
            continue;
          }
          --sp;
          break;
        case Op::Index:
          stack[sp - 2] = index(in, stack[sp - 2], stack[sp - 1]);
          --sp;
          break;
        case Op::Call: {
          const std::uint32_t argc = in.arg;
          Slot* args = stack + (sp - argc);
          const Slot r = call(in, args, argc);
          sp -= argc;
          stack[sp++] = r;
          break;
        }
      }
      ++pc;
    }
    return stack[0];
  }

 private:
  const ExpressionProgram& m_p;
};

bool fold_constant(const ExpressionProgram& prog, const Instr* code, std::size_t n, Slot& out) {
  try {
    const Machine m(prog);
    out = m.run([](std::uint32_t) -> Slot { throw std::logic_error("no variables in a constant"); }, code, n);
    return true;
  } catch (const expression_error&) {
    return false;
  }
}

const std::string& empty_string() {
  static const std::string s;
  return s;
}
const std::vector<std::size_t>& empty_indices() {
  static const std::vector<std::size_t> v;
  return v;
}

void check_bound(const ExpressionProgram& p, std::size_t given) {
  if (given < p.variable_count)
    throw invalid_argument_error(fmt::format("expression \"{}\" has {} variables but {} values were given", p.source,
                                             p.variable_count, given));
}

}  // namespace

Expression Expression::compile(std::string_view source, std::span<const std::string> variables) {
  return compile(source, variables, {});
}

Expression Expression::compile(std::string_view source, std::span<const std::string> variables,
                               std::span<const ListBinding> lists) {
  auto prog = std::make_shared<ExpressionProgram>();
  prog->source = std::string(source);
  prog->variable_count = variables.size();
  Compiler(*prog, variables, lists).compile();
  Expression e;
  e.m_program = std::move(prog);
  return e;
}

Value Expression::evaluate(std::span<const Value> values) const {
  if (!m_program) throw invalid_argument_error("evaluating an empty Expression");
  const auto& p = *m_program;
  check_bound(p, values.size());
  const Machine m(p);
  const Slot r = m.run([&](std::uint32_t i) { return Machine::from_value(values[i]); });
  switch (r.kind) {
    case Kind::Int: return Value(r.i);
    case Kind::Float: return Value(r.d);
    case Kind::Str: return Value(*r.s);
    case Kind::List: break;
  }
  throw expression_error(p.source, 1, "the expression's value is a list, not a number or string");
}

double Expression::evaluate_number(std::span<const double> values) const {
  if (!m_program) throw invalid_argument_error("evaluating an empty Expression");
  const auto& p = *m_program;
  check_bound(p, values.size());
  const Machine m(p);
  // Integral numbers are bound as Python ints, so // and % and overflow follow int rules.
  const Slot r = m.run([&](std::uint32_t i) {
    const double d = values[i];
    if (d >= -9.2e18 && d <= 9.2e18) {
      const auto t = static_cast<std::int64_t>(d);
      if (static_cast<double>(t) == d) return Machine::make_int(t);
    }
    return Machine::make_float(d);
  });
  switch (r.kind) {
    case Kind::Int: return static_cast<double>(r.i);
    case Kind::Float: return r.d;
    case Kind::Str:
    case Kind::List: break;
  }
  throw expression_error(p.source, 1, fmt::format("the expression's value is a {}, not a number", type_name(r.kind)));
}

const std::string& Expression::source() const noexcept { return m_program ? m_program->source : empty_string(); }

const std::vector<std::size_t>& Expression::used_variables() const noexcept {
  return m_program ? m_program->used : empty_indices();
}

}  // namespace gpuforecast
