// devmesh-plan --failed LIST --repair [--spares N]: who takes each failed
// rank's place when the mesh is repaired (docs/SEMANTICS.md "Repair").
//
// The mesh repaired is the one a program makes with `spares = N`: the root
// over parent ranks 0..W-1 (root index = parent rank), the spares the
// parent's last N ranks W..W+N-1. devmesh::repair() says which index spare k
// and spawned rank j take; the repaired root has the same shape and names,
// every survivor at its own index, spare k shown as its parent rank W+k and
// spawned rank j as W+N+j (after the parent's ranks, where merging the
// spawned ranks into the parent puts them).

#include <algorithm>
#include <string>
#include <vector>

#include "plan.hpp"

namespace devmesh::plan {
namespace {

// "1 spare", "2 spares"
std::string plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "replicate=2 shard=1"
std::string coordinate_text(const View& root, index_t x) {
  const std::vector<index_t> c = root.coordinate(x);
  std::string out;
  for (std::size_t i = 0; i < c.size(); ++i) out += (i ? " " : "") + root.root_names()[i] + "=" + std::to_string(c[i]);
  return out;
}

// Spare k's parent rank; spawned rank j's rank after the parent's.
index_t spare_rank(const RepairResult& r, std::size_t k) { return r.before.root_size() + static_cast<index_t>(k); }
index_t spawn_rank(const RepairResult& r, std::size_t j) {
  return r.before.root_size() + r.spares + static_cast<index_t>(j);
}

// The root repaired must be the mesh made with spares: parent rank = root
// index, in a parent of W or W + spares ranks.
void check_repairable(const View& root, index_t spares) {
  const index_t w = root.root_size();
  bool identity = true;
  for (index_t x = 0; identity && x < w; ++x) identity = root.parent_rank(x) == x;
  if (!identity)
    throw Error(Status::invalid_argument, "--repair models a mesh made with spares, over parent ranks 0.." +
                                              std::to_string(w - 1) +
                                              " in order (the spares after them): give no --ranks");
  if (root.world() != w && root.world() != w + spares)
    throw Error(Status::invalid_argument,
                "--repair: the parent has " + std::to_string(root.world()) + " ranks, but a mesh of " +
                    std::to_string(w) + " ranks made with " + std::to_string(spares) + " spares has a parent of " +
                    std::to_string(w + spares) + " (--world " + std::to_string(w + spares) + ")");
}

// The failed indices filled, the first `limit` of them.
std::vector<SvgOptions::Note> filled_notes(const RepairResult& r, std::size_t limit) {
  std::vector<SvgOptions::Note> out;
  const std::size_t total = r.repaired.by_spare.size() + r.repaired.by_spawn.size();
  for (std::size_t i = 0; i < total && i < limit; ++i) {
    const bool spare = i < r.repaired.by_spare.size();
    const std::size_t j = spare ? i : i - r.repaired.by_spare.size();
    const index_t x = spare ? r.repaired.by_spare[i] : r.repaired.by_spawn[j];
    std::string line = "index " + std::to_string(x) + " (" + coordinate_text(r.before, x) + "): ";
    line += spare ? "spare, parent rank " + std::to_string(spare_rank(r, i))
                  : "spawned rank " + std::to_string(j) + ", shown as rank " + std::to_string(spawn_rank(r, j));
    out.push_back({"filled", line});
  }
  if (total > limit) out.push_back({"filled", "... (" + std::to_string(total) + " filled in all)"});
  return out;
}

std::vector<index_t> standby_ranks(const RepairResult& r) {
  std::vector<index_t> out;
  for (std::size_t k = r.repaired.by_spare.size(); k < static_cast<std::size_t>(r.spares); ++k)
    out.push_back(spare_rank(r, k));
  return out;
}

std::vector<index_t> kept(const RepairResult& r) {
  std::vector<index_t> out;
  for (index_t x = 0; x < r.before.root_size(); ++x)
    if (!std::binary_search(r.repaired.failed.begin(), r.repaired.failed.end(), x)) out.push_back(x);
  return out;
}

}  // namespace

View repair_root(const View& root, const std::vector<index_t>& failed, index_t spares,
                 std::optional<RepairResult>& result) {
  if (!root.is_root()) throw Error(Status::invalid_argument, "--repair acts on the root mesh (give --root first)");
  // O(W) in memory, as --shrink.
  if (root.root_size() > max_listed_ranks)
    throw Error(Status::invalid_argument, "--repair is shown for meshes of at most " +
                                              std::to_string(max_listed_ranks) + " ranks; this one has " +
                                              std::to_string(root.root_size()));
  Repaired repaired = devmesh::repair(root.root_size(), failed, spares);
  // The spares are listed too (and W + spares must not overflow).
  if (spares > max_listed_ranks)
    throw Error(Status::invalid_argument, "--repair is shown with at most " + std::to_string(max_listed_ranks) +
                                              " spares; --spares is " + std::to_string(spares));
  check_repairable(root, spares);
  const index_t w = root.root_size();
  RootSpec before{root.root_shape(), root.root_names(), w + spares, {}};
  RootSpec after{root.root_shape(), root.root_names(), w + spares + static_cast<index_t>(repaired.by_spawn.size()), {}};
  for (index_t x = 0; x < w; ++x) {
    if (spares > 0) before.ranks.push_back(x);
    after.ranks.push_back(x);
  }
  RepairResult r{View::create(std::move(before)), spares, std::move(repaired)};
  for (std::size_t k = 0; k < r.repaired.by_spare.size(); ++k)
    after.ranks[static_cast<std::size_t>(r.repaired.by_spare[k])] = spare_rank(r, k);
  for (std::size_t j = 0; j < r.repaired.by_spawn.size(); ++j)
    after.ranks[static_cast<std::size_t>(r.repaired.by_spawn[j])] = spawn_rank(r, j);
  View next = View::create(std::move(after));
  result = std::move(r);
  return next;
}

std::vector<SvgOptions::Note> repair_notes(const RepairResult& r) {
  const std::size_t by_spare = r.repaired.by_spare.size(), by_spawn = r.repaired.by_spawn.size();
  std::string heading = "repaired with " + plural(static_cast<std::size_t>(r.spares), "spare", "spares") + ": ";
  if (r.repaired.failed.empty())
    heading += "nothing failed, nothing filled";
  else
    heading += plural(by_spare + by_spawn, "failed index", "failed indices") + " filled, " + std::to_string(by_spare) +
               " by " + (by_spare == 1 ? "a spare" : "spares") + " and " + std::to_string(by_spawn) + " by " +
               (by_spawn == 1 ? "a spawned rank" : "spawned ranks");
  heading += "; " + plural(static_cast<std::size_t>(r.repaired.spares_left), "spare", "spares") + " left in standby";
  std::vector<SvgOptions::Note> out{{"repair", heading}, {"failed", "failed: " + list_text(r.repaired.failed)}};
  for (SvgOptions::Note& note : filled_notes(r, 64)) out.push_back(std::move(note));
  out.push_back({"kept", "kept: " + list_text(kept(r)) + " (every other rank keeps its root index and coordinate)"});
  const std::vector<index_t> standby = standby_ranks(r);
  out.push_back({"standby", "standby: " + (standby.empty()       ? std::string("none")
                                           : standby.size() == 1 ? "parent rank " + list_text(standby)
                                                                 : "parent ranks " + list_text(standby))});
  return out;
}

void repair_text(std::ostream& os, const RepairResult& r) {
  const auto notes = repair_notes(r);
  os << notes[0].text << '\n';
  for (std::size_t i = 1; i < notes.size(); ++i) os << "  " << notes[i].text << '\n';
  const index_t w = r.before.root_size();
  os << "  (parent ranks: 0-" << w - 1 << " the mesh";
  if (r.spares > 0) os << ", " << w << "-" << w + r.spares - 1 << " its spares";
  if (!r.repaired.by_spawn.empty()) os << ", spawned rank j shown as " << w + r.spares << "+j";
  os << ")\n\nbefore the repair:\n";
  print_text(os, r.before, std::nullopt, std::nullopt);
  os << "\nafter the repair:\n";
}

nlohmann::ordered_json repair_json(const RepairResult& r) {
  nlohmann::ordered_json filled = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < r.repaired.by_spare.size(); ++k) {
    const index_t x = r.repaired.by_spare[k];
    filled.push_back(
        {{"index", x}, {"coords", r.before.coordinate(x)}, {"by", "spare"}, {"parent_rank", spare_rank(r, k)}});
  }
  for (std::size_t j = 0; j < r.repaired.by_spawn.size(); ++j) {
    const index_t x = r.repaired.by_spawn[j];
    filled.push_back({{"index", x}, {"coords", r.before.coordinate(x)}, {"by", "spawn"}, {"spawn_rank", j}});
  }
  nlohmann::ordered_json j;
  j["failed"] = r.repaired.failed;
  j["filled"] = std::move(filled);
  j["spares"] = r.spares;
  j["spares_left"] = r.repaired.spares_left;
  j["spawned"] = r.repaired.by_spawn.size();
  j["kept"] = kept(r);
  j["standby_ranks"] = standby_ranks(r);
  j["before"] = to_json(r.before, std::nullopt, std::nullopt);
  return j;
}

std::string repair_not_member(const RepairResult& r, index_t rank) {
  const std::string name = "rank " + std::to_string(rank);
  const auto& failed = r.repaired.failed;
  const auto at = std::lower_bound(failed.begin(), failed.end(), rank);
  if (at != failed.end() && *at == rank) {
    const std::size_t i = static_cast<std::size_t>(at - failed.begin());
    const bool spare = i < r.repaired.by_spare.size();
    return name + " failed: its root index " + std::to_string(rank) + " is held by " +
           (spare ? "spare parent rank " + std::to_string(spare_rank(r, i))
                  : "spawned rank " + std::to_string(i - r.repaired.by_spare.size()) + " (shown as rank " +
                        std::to_string(spawn_rank(r, i - r.repaired.by_spare.size())) + ")") +
           " in the repaired mesh";
  }
  const std::vector<index_t> standby = standby_ranks(r);
  if (std::binary_search(standby.begin(), standby.end(), rank))
    return name + " is a spare left in standby: it is not a member of the repaired mesh";
  return "";
}

}  // namespace devmesh::plan
