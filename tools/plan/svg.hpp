// devmesh-plan's SVG drawing, shared by the root grid (render_svg.cpp) and
// the placement over levels (render_levels.cpp): written by hand, no
// library, every coordinate an integer number of pixels.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan.hpp"

namespace devmesh::plan::svg {

// Tableau 10: ten colours told apart by most readers, colour-blind included.
inline constexpr const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                          "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
inline constexpr index_t palette_size = sizeof(palette) / sizeof(palette[0]);

inline constexpr index_t margin = 24;
inline constexpr index_t gap = 4;          // between cells
inline constexpr index_t pad = 8;          // inside a box, around its contents
inline constexpr index_t host_label = 18;  // a box's caption above its contents
inline constexpr index_t host_space = 14;  // between boxes
inline constexpr index_t max_legend = 32;  // groups listed in the legend
inline constexpr index_t max_listed = 12;  // ranks listed per legend line

// Black or white, whichever contrasts more with the fill ("#rrggbb").
const char* ink(std::string_view fill);
// Text for XML content and attribute values: the five special characters
// escaped; bytes that are not UTF-8 and characters XML 1.0 forbids become
// U+FFFD, so that any dim name gives a well-formed document.
std::string xml(std::string_view s);
// A generous width estimate in pixels for text at font size `size`.
index_t text_width(std::string_view s, index_t size, bool bold = false);
// "0,1,2", past `limit` values "0,1,...,9".
std::string join(const std::vector<index_t>& values, std::size_t limit);

// The document being written, with its running size.
struct Canvas {
  std::string body;
  index_t width = 0;
  index_t height = 0;

  void fit(index_t right, index_t bottom);
  // Left-aligned (or anchored) text; `content` is raw and escaped here.
  void text(index_t x, index_t y, std::string_view content, index_t size, std::string_view attrs = "",
            std::string_view anchor = "start");
  void rect(index_t x, index_t y, index_t w, index_t h, std::string_view attrs);
};

// One panel drawn from (0, 0): the parent ranks inside the level instances
// of options.topology (nested boxes, outermost first), each rank of the
// mesh filled with the colour of its group along dim `dim` of the view,
// the leftovers grey; then the legend of those groups (render_levels.cpp).
Canvas levels_panel(const View& view, std::size_t dim, const SvgOptions& options);

}  // namespace devmesh::plan::svg
