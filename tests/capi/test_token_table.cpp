// The C layer's token table (lib/capi/capi.hpp, TokenTable), alone: tokens
// of live objects find them, tokens of removed ones and made-up values find
// nothing (nor does remove take anything for them), a slot used again
// carries a new generation, the table grows past its first chunks, and a
// find that takes no lock stays right while another thread adds and
// removes: every token of an object that stays live finds it, every
// token removed before the readers start finds nothing.
#define BOOST_TEST_MODULE token_table
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "capi/capi.hpp"

namespace {

struct Thing {
  int id;
};
struct Opaque;
using Token = Opaque*;
using Table = devmesh::capi::TokenTable<Thing, Token>;

Token made_up(std::uint32_t generation, std::uint32_t slot_plus_one) {
  return reinterpret_cast<Token>((static_cast<std::uintptr_t>(generation) << 32) | slot_plus_one);
}

BOOST_AUTO_TEST_CASE(tokens_find_their_objects_only) {
  Table t;
  std::vector<Token> tokens;
  for (int i = 0; i < 3000; ++i) tokens.push_back(t.add(std::make_unique<Thing>(Thing{i})));  // three chunks
  for (int i = 0; i < 3000; ++i) {
    const Thing* found = t.find(tokens[i]);
    BOOST_TEST_REQUIRE(found != nullptr);
    BOOST_TEST(found->id == i);
  }
  for (int i = 0; i < 3000; i += 2) BOOST_TEST(t.remove(tokens[i])->id == i);
  for (int i = 0; i < 3000; ++i) BOOST_TEST((t.find(tokens[i]) != nullptr) == (i % 2 == 1));
  for (int i = 0; i < 3000; i += 2) BOOST_TEST(!t.remove(tokens[i]));  // removed already
  // Slots used again: new tokens, the old ones still find nothing.
  std::vector<Token> again;
  for (int i = 0; i < 1500; ++i) again.push_back(t.add(std::make_unique<Thing>(Thing{10000 + i})));
  for (int i = 0; i < 1500; ++i) {
    BOOST_TEST(t.find(again[i])->id == 10000 + i);
    BOOST_TEST(t.find(tokens[2 * i]) == nullptr);
  }
  BOOST_TEST(t.find(nullptr) == nullptr);
  BOOST_TEST(t.find(made_up(1, 0)) == nullptr);            // slot 0 is no slot
  BOOST_TEST(t.find(made_up(0, 2)) == nullptr);            // generation 0 is never handed out
  BOOST_TEST(t.find(made_up(1, 3001)) == nullptr);         // never handed out
  BOOST_TEST(t.find(made_up(1, 0xffffffffu)) == nullptr);  // past the table
  BOOST_TEST(!t.remove(made_up(7, 2)));
}

BOOST_AUTO_TEST_CASE(find_without_a_lock_while_another_thread_adds_and_removes) {
  Table t;
  std::vector<Token> live, gone;
  for (int i = 0; i < 200; ++i) live.push_back(t.add(std::make_unique<Thing>(Thing{i})));
  for (int i = 0; i < 200; ++i) {
    gone.push_back(t.add(std::make_unique<Thing>(Thing{-1})));
    t.remove(gone.back());
  }
  std::atomic<bool> stop{false};
  std::atomic<long> wrong{0}, finds{0};
  std::thread writer([&] {  // churns slots (the removed ones' among them) and grows the table
    std::vector<Token> mine;
    for (int round = 0; !stop.load(); ++round) {
      for (int i = 0; i < 300; ++i) mine.push_back(t.add(std::make_unique<Thing>(Thing{-2})));
      for (Token k : mine) t.remove(k);
      mine.clear();
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&] {
      for (int pass = 0; pass < 2000; ++pass)
        for (int i = 0; i < 200; ++i) {
          const Thing* a = t.find(live[i]);
          if (!a || a->id != i) ++wrong;
          if (t.find(gone[i])) ++wrong;
          finds += 2;
        }
    });
  for (std::thread& r : readers) r.join();
  stop = true;
  writer.join();
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(finds.load() == 2L * 2000 * 200 * 2);
}

}  // namespace
