// The reference vectors (tests/data/vectors_random.json, 400 cases generated
// from SEMANTICS.md) replayed through the model: every step's status, and for
// successful steps every dim's name, size and all groups.
#define BOOST_TEST_MODULE vectors
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "devmesh/view.hpp"

using namespace devmesh;
using json = nlohmann::json;

namespace {

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

// Applies one op string ("S:a,b", "F:name", "F:-", "U:dim:2,3:x,y", "R").
View apply_op(const View& v, const std::string& op) {
  std::vector<std::string> f = split_list(op, ':');
  if (f[0] == "S") return v.slice(split_list(f.at(1), ','));
  if (f[0] == "F") return f.at(1) == "-" ? v.flatten() : v.flatten(f.at(1));
  if (f[0] == "R") return v.root();
  if (f[0] == "U") {
    std::vector<index_t> sizes;
    for (const std::string& s : split_list(f.at(2), ',')) sizes.push_back(std::stoll(s));
    return v.unflatten(f.at(1), sizes, split_list(f.at(3), ','));
  }
  throw std::runtime_error("bad op " + op);
}

json load() {
  std::ifstream in(VECTORS_FILE);
  BOOST_TEST_REQUIRE(in.good());
  return json::parse(in);
}

}  // namespace

BOOST_AUTO_TEST_CASE(reference_vectors) {
  const json data = load();
  std::size_t steps = 0;
  BOOST_TEST(data["cases"].size() == 400u);
  for (const json& c : data["cases"]) {
    RootSpec spec;
    spec.shape = c["shape"].get<std::vector<index_t>>();
    spec.names = c["names"].get<std::vector<std::string>>();
    spec.world = c["world"].get<index_t>();
    if (!c["ranks"].is_null()) spec.ranks = c["ranks"].get<std::vector<index_t>>();
    View v = View::create(spec);
    for (std::size_t i = 0; i < c["ops"].size(); ++i) {
      const std::string op = c["ops"][i];
      const json& step = c["steps"][i];
      const std::string expected = step["status"];
      BOOST_TEST_CONTEXT("case " << c.dump().substr(0, 160) << " op " << i << " " << op) {
        std::string got = "ok";
        try {
          v = apply_op(v, op);
        } catch (const Error& e) {
          got = std::string(status_name(e.status()));
        }
        BOOST_TEST(got == expected);
        if (got != "ok" || expected != "ok") continue;
        BOOST_TEST_REQUIRE(v.ndim() == step["dims"].size());
        for (std::size_t d = 0; d < v.ndim(); ++d) {
          const json& jd = step["dims"][d];
          BOOST_TEST(v.dims()[d].name == jd["name"].get<std::string>());
          BOOST_TEST(v.dims()[d].size() == jd["size"].get<index_t>());
          const auto groups = v.all_groups(d);
          BOOST_TEST((groups == jd["groups"].get<std::vector<std::vector<index_t>>>()));
          // The per-rank query agrees with the enumeration for every rank.
          for (const auto& g : groups)
            for (std::size_t k = 0; k < g.size(); ++k) {
              const index_t x = *v.root_index(g[k]);
              BOOST_TEST(v.group(d, x) == g);
              BOOST_TEST(v.local_rank(d, x) == static_cast<index_t>(k));
            }
        }
        ++steps;
      }
    }
  }
  BOOST_TEST_MESSAGE(steps << " successful steps checked");
  BOOST_TEST(steps > 1000u);
}
