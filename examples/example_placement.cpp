// A placed mesh (MeshOptions::placement, docs/TOPOLOGY.md): dims kept
// within levels of the machine (host, NVLink domain, switch), and the
// groups each dim's communicator really has, as parent ranks.
//
//   srun --mpi=pmi2 ./example_placement --shape 2,4 --names dp,tp --place tp=host --out groups.json
//   mpiexec -n 8 ./example_placement --topology job.txt --shape 2,4 --names dp,tp --place tp=domain
//
// --topology FILE plays a machine on one host: line r+1 of FILE is rank r's
// place as devmesh-plan takes it ("host=n3 domain=nvl1 switch=s0"), set as
// DEVMESH_HOST_ID and DEVMESH_TOPOLOGY before the mesh is made. On a
// cluster leave it out: hosts, Slurm's topology and the NVLink domains are
// found. Without any argument it plays hosts of 2 ranks in NVLink domains
// of 4 and places (dp, tp) with tp within a domain.
//
// --out FILE: the lowest member writes, once every check is done, {"world",
// "levels", "parent_ranks", "leftovers", "dims": [{"name", "groups"}]}
// (groups as parent ranks, from each dim's communicator), the form of
// devmesh-plan --json; where the creation fails, {"error", "messages"}
// with every rank's message. Exit status: 0 when the mesh was made and
// every check passed, 1 otherwise.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "devmesh/hosts.hpp"
#include "devmesh/mesh.hpp"
#include "devmesh/topology.hpp"
#include "report.hpp"

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Rank r's line of a planner topology file as the two variables.
void simulate(const std::string& file, int rank) {
  std::ifstream in(file);
  std::string line;
  for (int r = 0; r <= rank && std::getline(in, line);) {
    const auto hash = line.find('#');
    if (line.substr(0, hash).find('=') != std::string::npos) ++r;
  }
  std::replace(line.begin(), line.end(), '\t', ' ');  // pairs apart by blanks or tabs, as devmesh-plan reads them
  const devmesh::Pairs levels = devmesh::parse_pairs(line.substr(0, line.find('#')), ' ', "topology line");
  std::string outer;
  for (std::size_t i = 1; i < levels.size(); ++i) outer += (i > 1 ? ";" : "") + levels[i].first + "=" + levels[i].second;
  setenv(devmesh::host_id_variable, levels.at(0).second.c_str(), 1);
  if (!outer.empty()) setenv(devmesh::topology_variable, outer.c_str(), 1);
}

std::string list(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

// Every rank's string, on every rank.
std::vector<std::string> all_strings(const std::string& mine, MPI_Comm comm) {
  int world = 0, len = static_cast<int>(mine.size());
  MPI_Comm_size(comm, &world);
  std::vector<int> lens(static_cast<std::size_t>(world)), displs(lens.size());
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm);
  int total = 0;
  for (std::size_t r = 0; r < lens.size(); ++r) displs[r] = (total += lens[r]) - lens[r];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lens.size(); ++r) out.push_back(all.substr(displs[r], lens[r]));
  return out;
}

// The file appears whole (written aside, then renamed).
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".part";
  std::ofstream(tmp) << text;
  std::rename(tmp.c_str(), path.c_str());
}

// Each dim's groups as its communicator has them (members allgather their
// parent rank over it), collected on every rank; leftovers add none.
std::string dims_json(const devmesh::Mesh& mesh, const std::vector<std::string>& names, MPI_Comm world) {
  std::string out;
  for (const std::string& dim : names) {
    std::string mine;
    if (mesh) {
      const int me = mesh.parent_rank();
      std::vector<int> got(static_cast<std::size_t>(mesh.size(dim)));
      MPI_Allgather(&me, 1, MPI_INT, got.data(), 1, MPI_INT, mesh.comm(dim));
      mine = list(got);
    }
    std::map<std::string, int> seen;
    std::string groups;
    for (const std::string& g : all_strings(mine, world))
      if (!g.empty() && seen.emplace(g, 0).second) groups += (groups.empty() ? "" : ",") + g;
    out += std::string(out.empty() ? "" : ",") + "{\"name\":" + quoted(dim) + ",\"groups\":[" + groups + "]}";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  std::string shape_arg = "0,0", names_arg = "dp,tp", place_arg, topology, out;
  if (argc == 1) {  // the demonstration machine
    setenv(devmesh::host_id_variable, ("h" + std::to_string(rank / 2)).c_str(), 1);
    setenv(devmesh::topology_variable, ("domain=nvl" + std::to_string(rank / 4)).c_str(), 1);
    shape_arg = "0," + std::to_string(world % 4 == 0 ? 4 : world % 2 == 0 ? 2 : 1);
    place_arg = "tp=domain";
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--shape") shape_arg = value;
    if (key == "--names") names_arg = value;
    if (key == "--place") place_arg = value;
    if (key == "--topology") topology = value;
    if (key == "--out") out = value;
  }
  std::vector<int> shape;
  for (const std::string& s : split(shape_arg, ',')) shape.push_back(std::atoi(s.c_str()));
  const std::vector<std::string> names = split(names_arg, ',');
  devmesh::MeshOptions options;
  options.placement = devmesh::parse_pairs(place_arg, ',', "--place");
  if (!topology.empty()) simulate(topology, rank);

  devmesh::Mesh mesh;
  std::string error;
  try {
    mesh = devmesh::Mesh::create(MPI_COMM_WORLD, shape, names, options);
  } catch (const devmesh::Error& e) {
    error = std::string(devmesh::status_name(e.status())) + "\n" + e.what();
  }
  const std::vector<std::string> errors = all_strings(error, MPI_COMM_WORLD);
  if (!errors[0].empty()) {  // a creation fails on every rank alike
    example::say(MPI_COMM_WORLD, "creation refused: %s\n", errors[0].c_str());
    if (rank == 0 && !out.empty()) {
      std::string messages;
      for (const std::string& e : errors) messages += (messages.empty() ? "" : ",") + quoted(e.substr(e.find('\n') + 1));
      write_file(out, "{\"error\":" + quoted(errors[0].substr(0, errors[0].find('\n'))) + ",\"messages\":[" +
                          messages + "]}\n");
    }
    MPI_Finalize();
    return 1;
  }

  // Who holds each root index, and the levels found.
  const int index = mesh ? mesh.root_index() : -1;
  std::vector<int> index_of(static_cast<std::size_t>(world));
  MPI_Allgather(&index, 1, MPI_INT, index_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> parent_ranks, leftovers;
  for (int r = 0; r < world; ++r) {
    const int x = index_of[static_cast<std::size_t>(r)];
    if (x < 0) {
      leftovers.push_back(r);
      continue;
    }
    if (static_cast<std::size_t>(x) >= parent_ranks.size()) parent_ranks.resize(static_cast<std::size_t>(x) + 1, -1);
    parent_ranks[static_cast<std::size_t>(x)] = r;
  }
  int failures = 0;
  std::string levels = "\"host\"";
  if (mesh) {
    devmesh::record_hosts(mesh);  // recorded already where placed
    for (const devmesh::LevelInfo& l : devmesh::host_info(mesh).levels) levels += "," + quoted(l.name);
    // Every placed dim within its level, as the mesh reports it.
    for (const auto& [dim, level] : options.placement) failures += devmesh::dim_within(mesh, dim, level) ? 0 : 1;
  }
  const std::string dims = dims_json(mesh, names, MPI_COMM_WORLD);
  MPI_Comm members = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, mesh ? 0 : MPI_UNDEFINED, rank, &members);
  if (mesh) {
    for (const std::string& dim : names) failures += example::verify_dim(mesh, dim, members);
    example::say(members, "%zu of %d ranks placed (%zu left over), levels %s\n", parent_ranks.size(), world,
                 leftovers.size(), levels.c_str());
    for (const std::string& dim : names) {
      std::string within = devmesh::dim_within(mesh, dim, "host") ? " host" : "";
      for (const devmesh::LevelInfo& l : devmesh::host_info(mesh).levels)
        if (devmesh::dim_within(mesh, dim, l.name)) within += " " + l.name;
      example::say(members, "  %-8s within:%s\n", dim.c_str(), within.empty() ? " no level" : within.c_str());
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, members);
    failures = all;
    if (mesh.root_index() == 0 && !out.empty())
      write_file(out, "{\"world\":" + std::to_string(world) + ",\"levels\":[" + levels +
                          "],\"parent_ranks\":" + list(parent_ranks) + ",\"leftovers\":" + list(leftovers) +
                          ",\"dims\":[" + dims + "]}\n");
    MPI_Comm_free(&members);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
