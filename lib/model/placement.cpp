// place(): a mesh over levels (devmesh/topology.hpp, docs/TOPOLOGY.md).
//
// The tiling: tier t < L (L levels) is the fan-out inside an instance of
// level t (ranks of a host, hosts of a domain, ...), tier L the top
// instances used. Choose u[t] children of each used instance (the first
// u[t] usable ones, by lowest parent rank), prod(u) = W, then split every
// dim's size over the tiers, f[d][t], with prod_d f[d][t] = u[t] and a dim
// bound to level l wholly in tiers 0..l. A dim's coordinate is a mixed
// radix number whose fastest digit is tier 0's; tier t's digit of a root
// index is its dims' tier-t digits in row-major order. Root index x goes to
// the rank reached by following those digits from the top: positions grow
// with every coordinate, and every instance is a run of positions, hence
// rule (b); a bound dim varies only inside one instance of its level,
// hence rule (a).
#include <algorithm>
#include <numeric>
#include <optional>

#include "devmesh/topology.hpp"
#include "devmesh/view.hpp"
#include "names.hpp"

namespace devmesh {
namespace {

using Ids = std::vector<index_t>;

[[noreturn]] void fail(Status s, const std::string& message) { throw Error(s, message); }

// The search gives up past this many steps (the answer is then an error).
constexpr long max_steps = 4'000'000;

std::string numbers(const Ids& v, std::size_t limit = 16) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < limit; ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > limit) out += ", ... (" + std::to_string(v.size()) + " in all)";
  return out;
}

std::string shape_text(const Ids& shape) { return "(" + numbers(shape, shape.size()) + ")"; }

// "ranks per host: 4, 4, 3; per domain: 8, 3"
std::string levels_text(const Levels& lv) {
  std::string out = "ranks";
  for (std::size_t l = 0; l < lv.names.size(); ++l)
    out += std::string(l ? "; " : " ") + "per " + lv.names[l] + ": " + numbers(lv.sizes(l));
  return out;
}

class Solver {
 public:
  Solver(const Levels& lv, const Ids& shape, const std::vector<int>& bound)
      : levels_(lv.names.size()), shape_(shape), bound_(bound) {
    // kids_[t][i]: instance i of tier t's children (ranks for t = 0); the
    // top tier has one instance, the whole.
    kids_.resize(levels_ + 1);
    for (std::size_t l = 0; l < levels_; ++l) kids_[l].resize(count(lv.of[l]));
    const index_t top = levels_ ? count(lv.of[levels_ - 1]) : 0;
    kids_[levels_].assign(1, {});
    for (index_t i = 0; i < top; ++i) kids_[levels_][0].push_back(i);
    std::vector<index_t> seen(levels_, -1);
    for (std::size_t r = 0; r < lv.of[0].size(); ++r) {
      kids_[0][static_cast<std::size_t>(lv.of[0][r])].push_back(static_cast<index_t>(r));
      for (std::size_t l = 1; l < levels_; ++l) {
        const index_t child = lv.of[l - 1][r];
        if (child > seen[l - 1]) {  // instances appear in increasing order
          seen[l - 1] = child;
          kids_[l][static_cast<std::size_t>(lv.of[l][r])].push_back(child);
        }
      }
    }
    f_.assign(shape_.size(), Ids(levels_ + 1, 1));
    u_.assign(levels_ + 1, 1);
  }

  std::optional<Placed> solve() {
    const index_t w = std::accumulate(shape_.begin(), shape_.end(), index_t{1}, std::multiplies<>());
    std::vector<char> usable(kids_[0].empty() ? 0 : total_ranks(), 1);
    if (!tiers(0, w, usable)) return std::nullopt;
    return placed();
  }

  bool exhausted() const noexcept { return steps_ > max_steps; }

 private:
  static index_t count(const Ids& of) { return of.empty() ? 0 : *std::max_element(of.begin(), of.end()) + 1; }
  std::size_t total_ranks() const {
    std::size_t n = 0;
    for (const Ids& k : kids_[0]) n += k.size();
    return n;
  }

  // How many of each tier-t instance's children are usable.
  Ids usable_counts(std::size_t t, const std::vector<char>& usable) const {
    Ids c(kids_[t].size());
    for (std::size_t i = 0; i < kids_[t].size(); ++i)
      for (const index_t k : kids_[t][i]) c[i] += usable[static_cast<std::size_t>(k)];
    return c;
  }

  // Chooses u[t..] (largest first) and then the dims' split.
  bool tiers(std::size_t t, index_t remaining, const std::vector<char>& usable) {
    if (++steps_ > max_steps) return false;
    const Ids c = usable_counts(t, usable);
    if (t == levels_) {
      if (c.empty() || c[0] < remaining) return false;
      u_[t] = remaining;
      rem_ = shape_;
      return split(0);
    }
    const index_t most = c.empty() ? 0 : *std::max_element(c.begin(), c.end());
    for (index_t u = std::min(most, remaining); u >= 1; --u) {
      if (remaining % u != 0) continue;
      std::vector<char> next(c.size());
      for (std::size_t i = 0; i < c.size(); ++i) next[i] = c[i] >= u;
      u_[t] = u;
      if (tiers(t + 1, remaining / u, next)) return true;
      if (exhausted()) return false;
    }
    return false;
  }

  // Splits the dims' remaining sizes over tier t and those above.
  bool split(std::size_t t) {
    if (t > levels_) return true;
    index_t forced = 1;
    std::vector<std::size_t> free;
    for (std::size_t d = 0; d < shape_.size(); ++d) {
      const bool due = t == levels_ || bound_[d] == static_cast<int>(t);
      if (due) forced *= rem_[d];
      if (!due && rem_[d] > 1) free.push_back(d);
    }
    if (u_[t] % forced != 0) return false;
    // The innermost dims first, as host-major order has them: a dim bound
    // to an outer level takes an inner tier only where the search needs it.
    std::reverse(free.begin(), free.end());
    const Ids before = rem_;
    for (std::size_t d = 0; d < shape_.size(); ++d)
      if (t == levels_ || bound_[d] == static_cast<int>(t)) {
        f_[d][t] = rem_[d];
        rem_[d] = 1;
      }
    if (fill(t, free, 0, u_[t] / forced)) return true;
    rem_ = before;
    return false;
  }

  bool fill(std::size_t t, const std::vector<std::size_t>& free, std::size_t k, index_t q) {
    if (++steps_ > max_steps) return false;
    if (k == free.size()) return q == 1 && split(t + 1);
    const std::size_t d = free[k];
    const index_t r = rem_[d];
    for (index_t g = std::gcd(r, q); g >= 1; --g) {
      if (r % g != 0 || q % g != 0) continue;
      f_[d][t] = g;
      rem_[d] = r / g;
      if (fill(t, free, k + 1, q / g)) return true;
      rem_[d] = r;
      if (exhausted()) return false;
    }
    f_[d][t] = 1;
    return false;
  }

  // The used children of every instance, tier by tier, for the u chosen.
  std::vector<std::vector<Ids>> used() const {
    std::vector<std::vector<Ids>> out(levels_ + 1);
    std::vector<char> usable(total_ranks(), 1);
    for (std::size_t t = 0; t <= levels_; ++t) {
      out[t].resize(kids_[t].size());
      std::vector<char> next(kids_[t].size());
      for (std::size_t i = 0; i < kids_[t].size(); ++i) {
        for (const index_t k : kids_[t][i])
          if (usable[static_cast<std::size_t>(k)] && static_cast<index_t>(out[t][i].size()) < u_[t])
            out[t][i].push_back(k);
        next[i] = static_cast<index_t>(out[t][i].size()) == u_[t];
      }
      usable = std::move(next);
    }
    return out;
  }

  Placed placed() const {
    const std::vector<std::vector<Ids>> use = used();
    const index_t w = std::accumulate(shape_.begin(), shape_.end(), index_t{1}, std::multiplies<>());
    Placed out;
    out.shape = shape_;
    out.parent_ranks.resize(static_cast<std::size_t>(w));
    std::vector<char> member(total_ranks());
    Ids coord(shape_.size());
    for (index_t x = 0; x < w; ++x) {
      index_t rest = x;
      for (std::size_t d = shape_.size(); d-- > 0;) {
        coord[d] = rest % shape_[d];
        rest /= shape_[d];
      }
      Ids digit(levels_ + 1, 0);
      for (std::size_t d = 0; d < shape_.size(); ++d) {
        index_t c = coord[d];
        for (std::size_t t = 0; t <= levels_; ++t) {
          digit[t] = digit[t] * f_[d][t] + c % f_[d][t];
          c /= f_[d][t];
        }
      }
      index_t node = 0;
      for (std::size_t t = levels_ + 1; t-- > 0;) node = use[t][static_cast<std::size_t>(node)][digit[t]];
      out.parent_ranks[static_cast<std::size_t>(x)] = node;
      member[static_cast<std::size_t>(node)] = 1;
    }
    for (std::size_t r = 0; r < member.size(); ++r)
      if (!member[r]) out.leftovers.push_back(static_cast<index_t>(r));
    return out;
  }

  std::size_t levels_;
  Ids shape_;
  std::vector<int> bound_;
  std::vector<std::vector<Ids>> kids_;
  Ids u_, rem_;
  std::vector<Ids> f_;
  long steps_ = 0;
};

std::string bound_text(const std::vector<std::string>& names, const std::vector<int>& bound, const Levels& lv) {
  std::string out;
  for (std::size_t d = 0; d < names.size(); ++d)
    if (bound[d] >= 0) out += (out.empty() ? "" : ", ") + names[d] + "=" + lv.names[static_cast<std::size_t>(bound[d])];
  return out;
}

// Why no placement exists: the first bound dim that cannot be placed even
// alone, else the shape itself, else the bound dims together.
[[noreturn]] void explain(const Levels& lv, const Ids& shape, const std::vector<std::string>& names,
                          const std::vector<int>& bound, bool exhausted) {
  const std::string where = " over " + std::to_string(lv.ranks()) + " ranks (" + levels_text(lv) + ")";
  if (exhausted)
    fail(Status::shape_mismatch, "the placement " + bound_text(names, bound, lv) + " of shape " + shape_text(shape) +
                                     where + " was not found within the search limit");
  const std::vector<int> none(shape.size(), -1);
  if (!Solver(lv, shape, none).solve())
    fail(Status::shape_mismatch, "shape " + shape_text(shape) + " cannot be tiled" + where +
                                     ": it needs equal parts of equal instances at every level");
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (bound[d] < 0) continue;
    std::vector<int> one = none;
    one[d] = bound[d];
    if (!Solver(lv, shape, one).solve())
      fail(Status::shape_mismatch, "dim " + detail::quoted(names[d]) + " (size " + std::to_string(shape[d]) +
                                       ") cannot stay within one " + lv.names[static_cast<std::size_t>(bound[d])] +
                                       " in shape " + shape_text(shape) + where);
  }
  fail(Status::shape_mismatch, "dims " + bound_text(names, bound, lv) +
                                   " cannot all stay within their levels in shape " + shape_text(shape) + where);
}

}  // namespace

Placed place(const Levels& levels, std::vector<index_t> shape, const std::vector<std::string>& names,
             const Pairs& placement) {
  const index_t n = levels.ranks();
  if (levels.names.empty() || n < 1) fail(Status::invalid_argument, "placement needs the levels of at least one rank");
  if (names.size() != shape.size())
    fail(Status::invalid_argument,
         std::to_string(names.size()) + " dim names for " + std::to_string(shape.size()) + " dims");
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) shape = dims_create(n, shape);
  std::vector<int> bound(shape.size(), -1);
  for (const auto& [dim, level] : placement) {
    const auto it = std::find(names.begin(), names.end(), dim);
    if (it == names.end())
      fail(Status::unknown_dim, "placement " + detail::quoted(dim + "=" + level) +
                                    " names no dim of the mesh (its dims: " + detail::join(names, ", ") + ")");
    const auto d = static_cast<std::size_t>(it - names.begin());
    if (bound[d] >= 0) fail(Status::invalid_argument, "placement gives dim " + detail::quoted(dim) + " twice");
    bound[d] = static_cast<int>(levels.level(level));
  }
  const index_t w = std::accumulate(shape.begin(), shape.end(), index_t{1}, std::multiplies<>());
  if (w > n)
    fail(Status::shape_mismatch,
         "shape " + shape_text(shape) + " has " + std::to_string(w) + " ranks, the parent " + std::to_string(n));
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (bound[d] < 0) continue;
    const Ids sizes = levels.sizes(static_cast<std::size_t>(bound[d]));
    const index_t most = *std::max_element(sizes.begin(), sizes.end());
    if (shape[d] > most)
      fail(Status::shape_mismatch,
           "dim " + detail::quoted(names[d]) + " (size " + std::to_string(shape[d]) + ") is larger than its level " +
               detail::quoted(levels.names[static_cast<std::size_t>(bound[d])]) + ": the largest holds " +
               std::to_string(most) + " ranks (" + levels_text(levels) + ")");
  }
  Solver solver(levels, shape, bound);
  if (auto out = solver.solve()) return *std::move(out);
  explain(levels, shape, names, bound, solver.exhausted());
}

}  // namespace devmesh
