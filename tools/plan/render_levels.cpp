// devmesh-plan's SVG panel of a placement: the parent ranks inside the
// level instances of the topology, so that where each dim's groups fall can
// be seen.
//
// Every instance is a rounded
//   <rect class="level" data-level=LEVEL data-instance=NAME data-depth=L>
// (L = 0 for hosts) with its caption, holding the boxes of the instances
// inside it, or for a host its ranks, left to right by lowest parent rank
// and wrapping into rows. Each rank of the mesh is a
//   <g class="rank" data-rank=R data-index=X data-group=G>
// (X its root index, G its group along the panel's dim, numbered as
// all_groups orders them) holding a <rect class="cell"> in the group's
// colour, its parent rank and its root coordinate; a rank outside the mesh
// is a grey <g class="leftover" data-rank=R> (the placement left it over) or
// <g class="outside" data-rank=R> (a shrink dropped it).

#include <algorithm>
#include <string>
#include <vector>

#include "svg.hpp"

namespace devmesh::plan::svg {
namespace {

constexpr index_t cells_per_row = 8;  // in a host box
constexpr index_t max_row = 1200;     // wider rows of boxes wrap
constexpr index_t cell_height = 44;
constexpr const char* level_fill[] = {"#f3f3f3", "#e8eef6", "#eaf3e6", "#f6efe4"};

struct Point {
  index_t x = 0, y = 0;
};

// Sizes and places of every box, measured before anything is drawn.
struct Plan {
  const Topology& t;
  LevelTree tree;
  index_t cw = 0;
  std::vector<std::vector<Point>> size, at;  // [level][instance]; at: inside the parent's box

  // Places `n` items of sizes size(k) in rows no wider than `limit`; returns
  // the extent and writes each item's place.
  template <class Size, class Place>
  static Point flow(std::size_t n, index_t limit, index_t space, Size&& item, Place&& place) {
    Point extent, cursor;
    index_t row_height = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const Point s = item(k);
      if (cursor.x > 0 && cursor.x + s.x > limit) {
        cursor = {0, cursor.y + row_height + space};
        row_height = 0;
      }
      place(k, cursor);
      extent = {std::max(extent.x, cursor.x + s.x), std::max(extent.y, cursor.y + s.y)};
      cursor.x += s.x + space;
      row_height = std::max(row_height, s.y);
    }
    return extent;
  }

  // Measures instance i of level l and, inside it, everything it holds.
  void measure(std::size_t l, index_t i) {
    const auto ii = static_cast<std::size_t>(i);
    Point inner;
    if (l == 0) {
      const std::size_t n = tree.members[0][ii].size();
      inner = flow(
          n, cells_per_row * (cw + gap), gap,
          [&](std::size_t) {
            return Point{cw, cell_height};
          },
          [](std::size_t, Point) {});
    } else {
      const std::vector<index_t>& kids = tree.inner[l][ii];
      for (const index_t k : kids) measure(l - 1, k);
      inner = flow(
          kids.size(), max_row, host_space,
          [&](std::size_t k) { return size[l - 1][static_cast<std::size_t>(kids[k])]; },
          [&](std::size_t k, Point p) {
            at[l - 1][static_cast<std::size_t>(kids[k])] = {pad + p.x, host_label + pad + p.y};
          });
    }
    const index_t caption = text_width(t.levels.names[l] + " " + t.names[l][ii], 11) + 2 * pad;
    size[l][ii] = {std::max(inner.x + 2 * pad, caption), inner.y + host_label + 2 * pad};
  }
};

// The colouring dim's group of every parent rank of the view's root (-1:
// none), and each rank's root index (-1: none).
struct Membership {
  std::vector<index_t> group, index;
};

Membership membership(const View& view, std::size_t dim, index_t ranks) {
  Membership m{std::vector<index_t>(static_cast<std::size_t>(ranks), -1),
               std::vector<index_t>(static_cast<std::size_t>(ranks), -1)};
  const std::vector<std::vector<index_t>> groups = view.all_groups(dim);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (const index_t r : groups[g])
      if (r < ranks) m.group[static_cast<std::size_t>(r)] = static_cast<index_t>(g);
  for (index_t x = 0; x < view.root_size(); ++x)
    if (view.parent_rank(x) < ranks) m.index[static_cast<std::size_t>(view.parent_rank(x))] = x;
  return m;
}

std::string coordinate_text(const View& view, index_t x) {
  const std::vector<index_t>& shape = view.root_shape();
  std::string out;
  for (std::size_t i = shape.size(); i-- > 0;) {
    out = std::to_string(x % shape[i]) + (out.empty() ? "" : ",") + out;
    x /= shape[i];
  }
  return "(" + out + ")";
}

void draw_cell(Canvas& svg, const View& view, const SvgOptions& options, const Membership& m, index_t r, Point p,
               index_t cw) {
  const auto rr = static_cast<std::size_t>(r);
  const index_t g = m.group[rr], x = m.index[rr];
  if (x < 0) {
    const bool left =
        std::binary_search(options.topology->placed.leftovers.begin(), options.topology->placed.leftovers.end(), r);
    svg.body +=
        std::string("<g class=\"") + (left ? "leftover" : "outside") + "\" data-rank=\"" + std::to_string(r) + "\">\n";
    svg.rect(p.x, p.y, cw, cell_height, "rx=\"4\" fill=\"#e4e4e4\" stroke=\"#b0b0b0\" class=\"cell\"");
    svg.text(p.x + cw / 2, p.y + 20, std::to_string(r), 15, "fill=\"#777777\" class=\"rank-label\"", "middle");
    svg.text(p.x + cw / 2, p.y + cell_height - 8, left ? "left over" : "not in mesh", 9,
             "fill=\"#777777\" class=\"coordinate\"", "middle");
    svg.body += "</g>\n";
    return;
  }
  const char* fill = palette[g % palette_size];
  const bool outlined = options.member && options.member->rank == r;
  svg.body += "<g class=\"rank\" data-rank=\"" + std::to_string(r) + "\" data-index=\"" + std::to_string(x) +
              "\" data-group=\"" + std::to_string(g) + "\">\n";
  svg.rect(p.x, p.y, cw, cell_height,
           std::string("rx=\"4\" fill=\"") + fill + "\" class=\"cell\"" +
               (outlined ? " stroke=\"#000000\" stroke-width=\"3\"" : ""));
  svg.text(p.x + cw / 2, p.y + 20, std::to_string(r), 15,
           std::string("font-weight=\"bold\" fill=\"") + ink(fill) + "\" class=\"rank-label\"", "middle");
  svg.text(p.x + cw / 2, p.y + cell_height - 8, coordinate_text(view, x), 10,
           std::string("fill=\"") + ink(fill) + "\" class=\"coordinate\"", "middle");
  svg.body += "</g>\n";
}

void draw_box(Canvas& svg, const Plan& plan, const View& view, const SvgOptions& options, const Membership& m,
              std::size_t l, index_t i, Point origin) {
  const auto ii = static_cast<std::size_t>(i);
  const Point s = plan.size[l][ii];
  const std::string& level = plan.t.levels.names[l];
  const std::string& name = plan.t.names[l][ii];
  svg.rect(origin.x, origin.y, s.x, s.y,
           std::string("rx=\"10\" fill=\"") + level_fill[l % 4] +
               "\" stroke=\"#7a7a7a\" stroke-width=\"1.5\" class=\"level\" data-level=\"" + xml(level) +
               "\" data-instance=\"" + xml(name) + "\" data-depth=\"" + std::to_string(l) + "\"");
  svg.text(origin.x + pad, origin.y + 14, level + " " + name, 11, "fill=\"#444444\" class=\"level-label\"");
  if (l > 0) {
    for (const index_t k : plan.tree.inner[l][ii]) {
      const Point at = plan.at[l - 1][static_cast<std::size_t>(k)];
      draw_box(svg, plan, view, options, m, l - 1, k, {origin.x + at.x, origin.y + at.y});
    }
    return;
  }
  const std::vector<index_t>& ranks = plan.tree.members[0][ii];
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const auto kk = static_cast<index_t>(k);
    draw_cell(svg, view, options, m, ranks[k],
              {origin.x + pad + kk % cells_per_row * (plan.cw + gap),
               origin.y + host_label + pad + kk / cells_per_row * (cell_height + gap)},
              plan.cw);
  }
}

// "host n0", or "3 instances of switch" where no level holds the group.
std::string holder(const Topology& t, const std::vector<index_t>& group) {
  for (std::size_t l = 0; l < t.levels.names.size(); ++l) {
    const std::vector<index_t>& of = t.levels.of[l];
    std::vector<index_t> at;
    for (const index_t r : group) at.push_back(of[static_cast<std::size_t>(r)]);
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    if (at.size() == 1) return t.levels.names[l] + " " + t.names[l][static_cast<std::size_t>(at[0])];
    if (l + 1 == t.levels.names.size()) return std::to_string(at.size()) + " instances of " + t.levels.names[l];
  }
  return "";
}

index_t legend(Canvas& svg, const View& view, std::size_t dim, const Topology& t, index_t y) {
  const std::vector<std::vector<index_t>> all = view.all_groups(dim);
  const Dim& d = view.dims()[dim];
  const auto groups = static_cast<index_t>(all.size());
  std::string heading = "colour = group along " + d.name + " (" + std::to_string(groups) +
                        (groups == 1 ? " group of " : " groups of ") + std::to_string(d.size()) +
                        (d.size() == 1 ? " rank)" : " ranks)") + ", grey = not in the mesh";
  if (groups > palette_size) heading += "; colours repeat every " + std::to_string(palette_size) + " groups";
  svg.text(0, y, heading, 13, "font-weight=\"bold\" class=\"legend-title\"");
  for (index_t g = 0; g < std::min(groups, max_legend); ++g) {
    y += 20;
    const std::vector<index_t>& members = all[static_cast<std::size_t>(g)];
    svg.rect(0, y - 11, 14, 14,
             std::string("rx=\"2\" fill=\"") + palette[g % palette_size] + "\" class=\"swatch\" data-group=\"" +
                 std::to_string(g) + "\"");
    svg.text(22, y,
             d.name + " group " + std::to_string(g) + ": " + (members.size() == 1 ? "rank " : "ranks ") +
                 join(members, max_listed) + "  \xC2\xB7  " + holder(t, members),
             12, "class=\"legend\"");
  }
  if (groups > max_legend)
    svg.text(22, y += 20, "... and " + std::to_string(groups - max_legend) + " more groups", 12,
             "fill=\"#555555\" class=\"legend\"");
  return y;
}

}  // namespace

Canvas levels_panel(const View& view, std::size_t dim, const SvgOptions& options) {
  const Topology& t = *options.topology;
  const Dim& d = view.dims()[dim];
  Canvas svg;
  svg.text(0, 14,
           d.name + " = " + to_string(d.layout) + ": each colour one " + d.name + " group, " +
               within_text(within(view, dim, t)),
           14, "font-weight=\"bold\" class=\"panel-title\"");

  const std::size_t levels = t.levels.names.size(), top = levels - 1;
  Plan plan{t, level_tree(t.levels), 44, {}, {}};
  for (index_t x = 0; x < view.root_size(); ++x)
    plan.cw = std::max(plan.cw, text_width(coordinate_text(view, x), 10) + 10);
  for (index_t r = 0; r < t.levels.ranks(); ++r)
    plan.cw = std::max(plan.cw, text_width(std::to_string(r), 15, true) + 14);
  plan.size.resize(levels);
  plan.at.resize(levels);
  for (std::size_t l = 0; l < levels; ++l) {
    plan.size[l].resize(plan.tree.members[l].size());
    plan.at[l].resize(plan.tree.members[l].size());
  }
  const std::size_t tops = plan.tree.members[top].size();
  for (std::size_t i = 0; i < tops; ++i) plan.measure(top, static_cast<index_t>(i));
  Plan::flow(
      tops, max_row, host_space, [&](std::size_t i) { return plan.size[top][i]; },
      [&](std::size_t i, Point p) {
        plan.at[top][i] = {p.x, 30 + p.y};
      });

  const Membership m = membership(view, dim, t.levels.ranks());
  for (std::size_t i = 0; i < tops; ++i)
    draw_box(svg, plan, view, options, m, top, static_cast<index_t>(i), plan.at[top][i]);
  legend(svg, view, dim, t, svg.height + 28);
  return svg;
}

}  // namespace devmesh::plan::svg
