#define BOOST_TEST_MODULE layout
#include <boost/test/unit_test.hpp>

#include "devmesh/layout.hpp"

using namespace devmesh;

BOOST_AUTO_TEST_CASE(smoke) {
  Layout l{{{2, 1}, {4, 2}}};
  BOOST_TEST(offset(l, 6) == 5);
}
