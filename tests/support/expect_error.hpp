// expect_error: the model's unit tests' check that a call throws
// devmesh::Error with the given status and a message naming each of
// `mentions` (Boost.Test).
#pragma once

#include <boost/test/unit_test.hpp>

#include <initializer_list>
#include <string>

#include "devmesh/status.hpp"

template <class F>
void expect_error(F&& f, devmesh::Status status, std::initializer_list<std::string> mentions) {
  try {
    f();
    BOOST_ERROR("expected " << status << ", got success");
  } catch (const devmesh::Error& e) {
    BOOST_TEST(e.status() == status, "status " << e.status() << " (" << e.what() << "), expected " << status);
    for (const std::string& m : mentions)
      BOOST_TEST(std::string(e.what()).find(m) != std::string::npos,
                 "message '" << e.what() << "' does not mention '" << m << "'");
  }
}
