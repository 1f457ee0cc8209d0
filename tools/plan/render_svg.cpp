// devmesh-plan's SVG picture, written by hand: no library, every coordinate
// an integer number of pixels.
//
// Top to bottom: a title (the root's shape, ranks and hosts or levels; the
// view and the op chain that made it), the notes (with a placement: the
// request and the leftovers; after --shrink: the failed, spare and kept
// ranks), one line per dim of the view (its layout and, with hosts, its
// placement, with levels, those it stays within: data-within), two lines on
// the layout notation, then the panels: one per dim of the view (small
// multiples of one grid, each coloured by that dim's groups, with their
// legend; with a placement, the level instances instead of the grid:
// render_levels.cpp), or only the dim --color-by names. Each panel is a
// <g class="panel" data-dim=D> translated into place; coordinates inside it
// are the panel's own.
//
// The grid is the text picture's: the root's last dim across (wrapped every
// max_columns cells), its leading dims down. Each rank is a
//   <g class="rank" data-rank=R data-group=G data-host=H>
// holding a <rect class="cell"> filled with its group's colour and a <text>
// with its parent rank. With hosts, when every host's ranks form a rectangle
// of the grid (block placement with K a multiple or a divisor of the row
// length, say) the grid opens gaps at host boundaries and each host gets a
// rounded <rect class="host">; otherwise each host is a box of its own
// holding its ranks in parent-rank order, each cell also showing its root
// coordinate, since the grid's rows and columns no longer say it.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "svg.hpp"

namespace devmesh::plan {
namespace svg {

// Black or white, whichever contrasts more with the fill (WCAG luminance).
const char* ink(std::string_view fill) {
  auto channel = [&](std::size_t i) {
    const double c = std::stoi(std::string(fill.substr(i, 2)), nullptr, 16) / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  const double y = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return (y + 0.05) / 0.05 >= 1.05 / (y + 0.05) ? "#000000" : "#ffffff";
}

// Text for XML content and attribute values: the five special characters
// escaped; bytes that are not UTF-8 and characters XML 1.0 forbids (control
// characters, U+FFFE, U+FFFF) become U+FFFD, so that any dim name gives a
// well-formed document.
std::string xml(std::string_view s) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    switch (c) {
      case '&': out += "&amp;"; ++i; continue;
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      case '\'': out += "&apos;"; ++i; continue;
      default: break;
    }
    if (c < 0x80) {
      if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r')
        out += static_cast<char>(c);
      else
        out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    // Length and the allowed range of the second byte (no overlongs, no
    // surrogates, nothing past U+10FFFF).
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    bool valid = len > 0 && i + len <= n && p[i + 1] >= lo && p[i + 1] <= hi;
    for (std::size_t k = 2; valid && k < len; ++k) valid = p[i + k] >= 0x80 && p[i + k] <= 0xBF;
    if (!valid) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are well-formed UTF-8 but not XML.
    const bool noncharacter = len == 3 && c == 0xEF && p[i + 1] == 0xBF && p[i + 2] >= 0xBE;
    out += noncharacter ? std::string("\xEF\xBF\xBD") : std::string(s.substr(i, len));
    i += len;
  }
  return out;
}

// A generous width estimate for text in DejaVu Sans / Helvetica: about 0.56
// em per character (0.62 bold), counting UTF-8 characters, not bytes.
index_t text_width(std::string_view s, index_t size, bool bold) {
  index_t chars = 0;
  for (const char c : s) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return chars * size * (bold ? 62 : 56) / 100 + 2;
}

std::string join(const std::vector<index_t>& values, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == limit - 1 && values.size() > limit) {
      out += ",...," + std::to_string(values.back());
      break;
    }
    out += (i ? "," : "") + std::to_string(values[i]);
  }
  return out;
}

void Canvas::fit(index_t right, index_t bottom) {
  width = std::max(width, right);
  height = std::max(height, bottom);
}

void Canvas::text(index_t x, index_t y, std::string_view content, index_t size, std::string_view attrs,
                  std::string_view anchor) {
  body += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" font-size=\"" +
          std::to_string(size) + "\"";
  if (anchor != "start") body += " text-anchor=\"" + std::string(anchor) + "\"";
  if (!attrs.empty()) body += " " + std::string(attrs);
  body += ">" + xml(content) + "</text>\n";
  const index_t w = text_width(content, size, attrs.find("bold") != std::string_view::npos);
  fit(anchor == "start" ? x + w : anchor == "middle" ? x + w / 2 : x, y + size / 3);
}

void Canvas::rect(index_t x, index_t y, index_t w, index_t h, std::string_view attrs) {
  body += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(w) +
          "\" height=\"" + std::to_string(h) + "\" " + std::string(attrs) + "/>\n";
  fit(x + w, y + h);
}

}  // namespace svg

namespace {

using namespace svg;

constexpr index_t max_columns = 32;  // longer rows wrap

std::string shape_line(const std::vector<std::string>& names, const std::vector<index_t>& sizes) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? " " : "") + names[i] + "=" + std::to_string(sizes[i]);
  return out;
}

std::string range_text(index_t first, index_t last) {
  return first == last ? "rank " + std::to_string(first)
                       : "ranks " + std::to_string(first) + "-" + std::to_string(last);
}

// Where each rank sits: its cell's top-left corner.
struct Cell {
  index_t x = 0;
  index_t y = 0;
};

// One panel of the picture, drawn from (0, 0): the rank grid, each rank
// filled with the colour of its group along dim cd, and the legend of those
// groups. The grid is the text picture's: the root's last dim across
// (wrapped every max_columns cells), its leading dims down; hosts as boxes.
Canvas panel(const View& view, std::size_t cd, const SvgOptions& options) {
  const index_t w = view.root_size();
  const std::vector<std::string>& root_names = view.root_names();
  const std::vector<index_t>& root_shape = view.root_shape();
  const std::optional<Hosts>& hosts = options.hosts;
  const Dim& color_dim = view.dims()[cd];

  // Each root index's group along the colouring dim, numbered as all_groups
  // orders them (by smallest root index).
  const Layout& color_layout = color_dim.layout;
  const Layout rest = complement(color_layout, w);
  const index_t groups = size(rest), group_size = color_dim.size();
  std::vector<index_t> group_of(static_cast<std::size_t>(w));
  for (index_t g = 0; g < groups; ++g) {
    const index_t base = offset(rest, g);
    for (index_t k = 0; k < group_size; ++k) group_of[static_cast<std::size_t>(base + offset(color_layout, k))] = g;
  }
  auto host_of = [&](index_t x) { return hosts->host(view.parent_rank(x)); };

  Canvas svg;
  const index_t left = 0;
  index_t y = 14;
  svg.text(left, y, color_dim.name + " = " + to_string(color_dim.layout) + ": each colour one " + color_dim.name +
                        " group", 14, "font-weight=\"bold\" class=\"panel-title\"");
  y += 16;

  // The grid: visual row and column of each root index.
  const index_t cols = root_shape.back(), rows = w / cols;
  index_t wrap = std::min(cols, max_columns);
  if (hosts && cols > max_columns) {
    // Wrap where hosts line up if possible: at a multiple or divisor of K,
    // one that divides the row if possible.
    const index_t k = hosts->ranks_per_host;
    auto aligned = [&](index_t c, bool divides) { return (c % k == 0 || k % c == 0) && (!divides || cols % c == 0); };
    for (const bool divides : {true, false}) {
      index_t c = max_columns;
      while (c >= max_columns / 2 && !aligned(c, divides)) --c;
      if (c >= max_columns / 2) {
        wrap = c;
        break;
      }
    }
  }
  const index_t bands = (cols + wrap - 1) / wrap;
  const index_t vrows = rows * bands;
  auto vrow = [&](index_t x) { return x / cols * bands + x % cols / wrap; };
  auto vcol = [&](index_t x) { return x % cols % wrap; };

  // With hosts: does every host's set of ranks fill a rectangle of the grid?
  struct Box {
    index_t r0, r1, c0, c1, count = 0;
    std::vector<index_t> indices;  // root indices in parent-rank order
  };
  std::map<index_t, Box> boxes;
  bool rectangles = true;
  if (hosts) {
    std::vector<index_t> by_rank(static_cast<std::size_t>(w));
    for (index_t x = 0; x < w; ++x) by_rank[static_cast<std::size_t>(x)] = x;
    std::sort(by_rank.begin(), by_rank.end(),
              [&](index_t a, index_t b) { return view.parent_rank(a) < view.parent_rank(b); });
    for (const index_t x : by_rank) {
      auto [it, fresh] = boxes.try_emplace(host_of(x), Box{vrow(x), vrow(x), vcol(x), vcol(x), 0, {}});
      Box& b = it->second;
      b.r0 = std::min(b.r0, vrow(x)), b.r1 = std::max(b.r1, vrow(x));
      b.c0 = std::min(b.c0, vcol(x)), b.c1 = std::max(b.c1, vcol(x));
      ++b.count;
      b.indices.push_back(x);
    }
    for (const auto& [h, b] : boxes) rectangles = rectangles && b.count == (b.r1 - b.r0 + 1) * (b.c1 - b.c0 + 1);
  }
  const bool in_grid = !hosts || rectangles;

  // Cell size: the widest rank number, and in host boxes the root coordinate.
  auto coordinate_text = [&](index_t x) {
    std::string out;
    for (std::size_t i = root_shape.size(); i-- > 0;) {
      out = std::to_string(x % root_shape[i]) + (out.empty() ? "" : ",") + out;
      x /= root_shape[i];
    }
    return "(" + out + ")";
  };
  index_t cw = 44, ch = in_grid ? 32 : 44;
  for (index_t x = 0; x < w; ++x) {
    cw = std::max(cw, text_width(std::to_string(view.parent_rank(x)), 15, true) + 14);
    if (!in_grid) cw = std::max(cw, text_width(coordinate_text(x), 10) + 10);
  }

  std::vector<Cell> cells(static_cast<std::size_t>(w));
  auto draw_host = [&](index_t h, index_t bx, index_t by, index_t bw, index_t bh, index_t members) {
    svg.rect(bx, by, bw, bh,
             "rx=\"10\" fill=\"#f3f3f3\" stroke=\"#7a7a7a\" stroke-width=\"1.5\" class=\"host\" data-host=\"" +
                 std::to_string(h) + "\"");
    const index_t k = hosts->ranks_per_host;
    std::string label = "host " + std::to_string(h) + " \xC2\xB7 " + range_text(h * k, h * k + k - 1);
    if (members != k) label += " (" + std::to_string(members) + " in the mesh)";
    if (text_width(label, 11) > bw - 2 * pad) label = "host " + std::to_string(h);
    if (text_width(label, 11) > bw - 2 * pad) label = "h" + std::to_string(h);
    svg.text(bx + pad, by + 14, label, 11, "fill=\"#444444\" class=\"host-label\"");
  };

  if (in_grid) {
    // Columns across, rows down, gaps where a host ends (or a wrapped row).
    std::vector<bool> row_break(static_cast<std::size_t>(vrows)), col_break(static_cast<std::size_t>(wrap));
    for (const auto& [h, b] : boxes) {
      row_break[static_cast<std::size_t>(b.r1)] = true;
      col_break[static_cast<std::size_t>(b.c1)] = true;
    }
    const index_t row_gap = hosts ? 2 * pad + host_label + host_space : bands > 1 ? 8 : 0;
    const index_t col_gap = hosts ? 2 * pad + host_space : 0;
    std::vector<index_t> gx(static_cast<std::size_t>(wrap)), gy(static_cast<std::size_t>(vrows));
    for (index_t c = 1; c < wrap; ++c)
      gx[static_cast<std::size_t>(c)] = gx[static_cast<std::size_t>(c - 1)] + cw + gap +
                                        (col_break[static_cast<std::size_t>(c - 1)] ? col_gap : 0);
    for (index_t r = 1; r < vrows; ++r) {
      const bool brk = hosts ? static_cast<bool>(row_break[static_cast<std::size_t>(r - 1)]) : r % bands == 0;
      gy[static_cast<std::size_t>(r)] = gy[static_cast<std::size_t>(r - 1)] + ch + gap + (brk ? row_gap : 0);
    }

    // Row labels: the leading dims' coordinates (and the wrapped range).
    std::vector<std::string> labels(static_cast<std::size_t>(vrows));
    index_t label_width = 0;
    for (index_t r = 0; r < vrows; ++r) {
      std::string& label = labels[static_cast<std::size_t>(r)];
      index_t rest_row = r / bands;
      for (std::size_t i = root_shape.size() - 1; i-- > 0;) {
        label = root_names[i] + "=" + std::to_string(rest_row % root_shape[i]) + (label.empty() ? "" : " ") + label;
        rest_row /= root_shape[i];
      }
      if (bands > 1) {
        const index_t first = r % bands * wrap, last = std::min(cols, first + wrap) - 1;
        label += (label.empty() ? "" : " ") + root_names.back() + "=" + std::to_string(first) + "-" +
                 std::to_string(last);
      }
      label_width = std::max(label_width, label.empty() ? 0 : text_width(label, 13) + 12);  // "=" is wide
    }
    const index_t inset = hosts ? pad : 0;
    const index_t ox = left + label_width + inset;
    const index_t header = bands == 1 ? 18 : 0;
    const index_t oy = y + header + (hosts ? pad + host_label : 0);

    if (bands == 1)
      for (index_t c = 0; c < cols; ++c)
        svg.text(ox + gx[static_cast<std::size_t>(c)] + cw / 2, y + 12, root_names.back() + "=" + std::to_string(c),
                 12, "fill=\"#333333\" class=\"column-label\"", "middle");
    for (index_t r = 0; r < vrows; ++r)
      if (!labels[static_cast<std::size_t>(r)].empty())
        svg.text(ox - inset - 10, oy + gy[static_cast<std::size_t>(r)] + ch / 2 + 4,
                 labels[static_cast<std::size_t>(r)], 12, "fill=\"#333333\" class=\"row-label\"", "end");
    for (const auto& [h, b] : boxes) {
      const index_t bx = ox + gx[static_cast<std::size_t>(b.c0)] - pad;
      const index_t by = oy + gy[static_cast<std::size_t>(b.r0)] - pad - host_label;
      draw_host(h, bx, by, gx[static_cast<std::size_t>(b.c1)] - gx[static_cast<std::size_t>(b.c0)] + cw + 2 * pad,
                gy[static_cast<std::size_t>(b.r1)] - gy[static_cast<std::size_t>(b.r0)] + ch + 2 * pad + host_label,
                b.count);
    }
    for (index_t x = 0; x < w; ++x)
      cells[static_cast<std::size_t>(x)] = {ox + gx[static_cast<std::size_t>(vcol(x))],
                                            oy + gy[static_cast<std::size_t>(vrow(x))]};
  } else {
    // Hosts do not tile the grid: one box per host, its ranks in parent-rank
    // order, boxes flowing left to right.
    std::string caption = "hosts do not form blocks of the grid: each box lists its ranks; (";
    for (std::size_t i = 0; i < root_names.size(); ++i) caption += (i ? "," : "") + root_names[i];
    caption += ") = root coordinate";
    svg.text(left, y + 12, caption, 12, "fill=\"#333333\" class=\"caption\"");
    index_t most = 0;
    for (const auto& [h, b] : boxes) most = std::max(most, b.count);
    const index_t inner = std::min(most, index_t{16});
    const index_t lines = (most + inner - 1) / inner;
    const index_t bw = inner * (cw + gap) - gap + 2 * pad;
    const index_t bh = host_label + lines * (ch + gap) - gap + 2 * pad;
    const index_t per_line = std::max(index_t{1}, std::min<index_t>(static_cast<index_t>(boxes.size()),
                                                                    (1400 - 2 * margin) / (bw + host_space)));
    index_t i = 0;
    for (const auto& [h, b] : boxes) {
      const index_t bx = left + i % per_line * (bw + host_space);
      const index_t by = y + 24 + i / per_line * (bh + host_space);
      draw_host(h, bx, by, bw, bh, b.count);
      for (std::size_t k = 0; k < b.indices.size(); ++k) {
        const index_t kk = static_cast<index_t>(k);
        cells[static_cast<std::size_t>(b.indices[k])] = {bx + pad + kk % inner * (cw + gap),
                                                          by + host_label + pad + kk / inner * (ch + gap)};
      }
      ++i;
    }
  }

  // The cells.
  for (index_t x = 0; x < w; ++x) {
    const Cell& c = cells[static_cast<std::size_t>(x)];
    const index_t g = group_of[static_cast<std::size_t>(x)];
    const char* fill = palette[g % palette_size];
    const index_t rank = view.parent_rank(x);
    const bool outlined = options.member && options.member->index == x;
    svg.body += "<g class=\"rank\" data-rank=\"" + std::to_string(rank) + "\" data-group=\"" + std::to_string(g) +
                "\"" + (hosts ? " data-host=\"" + std::to_string(host_of(x)) + "\"" : "") + ">\n";
    svg.rect(c.x, c.y, cw, ch,
             std::string("rx=\"4\" fill=\"") + fill + "\" class=\"cell\"" +
                 (outlined ? " stroke=\"#000000\" stroke-width=\"3\"" : ""));
    const char* text_fill = ink(fill);
    svg.text(c.x + cw / 2, c.y + (in_grid ? ch / 2 + 5 : 18), std::to_string(rank), 15,
             std::string("font-weight=\"bold\" fill=\"") + text_fill + "\" class=\"rank-label\"", "middle");
    if (!in_grid)
      svg.text(c.x + cw / 2, c.y + ch - 8, coordinate_text(x), 10,
               std::string("fill=\"") + text_fill + "\" class=\"coordinate\"", "middle");
    svg.body += "</g>\n";
  }

  // The legend: one swatch per group of the colouring dim.
  y = svg.height + 28;
  std::string heading = "colour = group along " + color_dim.name + " (" + std::to_string(groups) +
                        (groups == 1 ? " group of " : " groups of ") + std::to_string(group_size) +
                        (group_size == 1 ? " rank)" : " ranks)");
  if (groups > palette_size) heading += ", colours repeat every " + std::to_string(palette_size) + " groups";
  svg.text(left, y, heading, 13, "font-weight=\"bold\" class=\"legend-title\"");
  const std::vector<std::vector<index_t>> all = view.all_groups(cd);
  for (index_t g = 0; g < std::min(groups, max_legend); ++g) {
    y += 20;
    const std::vector<index_t>& members = all[static_cast<std::size_t>(g)];
    svg.rect(left, y - 11, 14, 14,
             std::string("rx=\"2\" fill=\"") + palette[g % palette_size] + "\" class=\"swatch\" data-group=\"" +
                 std::to_string(g) + "\"");
    std::string line = color_dim.name + " group " + std::to_string(g) + ": " +
                       (members.size() == 1 ? "rank " : "ranks ") + join(members, max_listed);
    if (hosts) {
      std::vector<index_t> on;
      for (const index_t r : members) on.push_back(hosts->host(r));
      std::sort(on.begin(), on.end());
      on.erase(std::unique(on.begin(), on.end()), on.end());
      line += "  \xC2\xB7  ";
      line += on.size() == 1   ? "host " + join(on, 6)
              : on.size() <= 6 ? "hosts " + join(on, 6)
                               : std::to_string(on.size()) + " hosts";
    }
    svg.text(left + 22, y, line, 12, "class=\"legend\"");
  }
  if (groups > max_legend) {
    y += 20;
    svg.text(left + 22, y, "... and " + std::to_string(groups - max_legend) + " more groups", 12,
             "fill=\"#555555\" class=\"legend\"");
  }

  return svg;
}

// The root, its ranks and hosts or levels.
std::string title_of(const View& view, const SvgOptions& options) {
  const std::optional<Hosts>& hosts = options.hosts;
  std::string title =
      shape_line(view.root_names(), view.root_shape()) + "  \xC2\xB7  " + std::to_string(view.root_size()) + " ranks";
  if (hosts)
    title += "  \xC2\xB7  " + std::to_string(hosts->count) + (hosts->count == 1 ? " host of " : " hosts of ") +
             std::to_string(hosts->ranks_per_host) + (hosts->ranks_per_host == 1 ? " rank" : " ranks");
  if (const Topology* t = options.topology) {
    title += "  \xC2\xB7  levels";
    for (std::size_t l = 0; l < t->levels.names.size(); ++l)
      title += std::string(l ? ", " : " ") + t->levels.names[l] + " (" + std::to_string(t->levels.sizes(l).size()) +
               ")";
  }
  return title;
}

// One line per dim from y on: layout, placement on the hosts or levels;
// the dim drawn alone (--color-by) bold. Then the notation. Returns the
// last line's y.
index_t dim_lines(Canvas& svg, const View& view, const SvgOptions& options, index_t y) {
  for (std::size_t d = 0; d < view.ndim(); ++d) {
    const Dim& dim = view.dims()[d];
    std::string line = dim.name + " = " + to_string(dim.layout) + " (size " + std::to_string(dim.size()) + ")";
    std::string placement_attr;
    if (options.hosts) {
      const Placement p = placement(view, d, *options.hosts);
      placement_attr = std::string(" data-placement=\"") + (p.intra_host ? "intra-host" : "cross-host") + "\"";
      line += "  \xC2\xB7  " + describe(p);
    }
    if (options.topology) {
      const std::vector<std::string> in = within(view, d, *options.topology);
      std::string levels;
      for (const std::string& l : in) levels += (levels.empty() ? "" : " ") + l;
      placement_attr += " data-within=\"" + xml(levels) + "\"";
      line += "  \xC2\xB7  " + within_text(in);
    }
    const bool bold = options.color_dim == d;
    if (bold) line += "  \xC2\xB7  colours";
    y += 20;
    svg.text(margin, y, line, 13,
             "class=\"dim\" data-dim=\"" + xml(dim.name) + "\"" + placement_attr +
                 (bold ? " font-weight=\"bold\"" : ""));
  }
  // What the layouts say (docs/SEMANTICS.md, "Layouts and views").
  for (const char* note :
       {"layout notation: size:stride over root indices (row-major, the root's last dim fastest): 2:4 is a "
        "group of 2 ranks 4 root indices apart, x and x+4;",
        "(sizes):(strides) has several modes, the first most significant: (2,2):(4,2) is the group x, x+2, "
        "x+4, x+6, in local-rank order."}) {
    y += 18;
    svg.text(margin, y, note, 12, "fill=\"#333333\" class=\"notation\"");
  }
  return y;
}

void check_drawable(const View& view, const SvgOptions& options) {
  for (const auto& [what, n] : {std::pair{"mesh", view.root_size()},
                                {"topology", options.topology ? options.topology->levels.ranks() : 0}})
    if (n > max_drawn_ranks)
      throw Error(Status::invalid_argument, std::string("the ") + what + " has " + std::to_string(n) +
                                                " ranks, too many to draw (at most " + std::to_string(max_drawn_ranks) +
                                                "); use the text or --json output, or --rank R");
}

}  // namespace

std::string to_svg(const View& view, const SvgOptions& options) {
  check_drawable(view, options);
  // The dims drawn: the one --color-by names, else every dim of the view,
  // one panel each (small multiples of the same grid).
  std::vector<std::size_t> drawn;
  if (options.color_dim)
    drawn.push_back(*options.color_dim);
  else
    for (std::size_t d = 0; d < view.ndim(); ++d) drawn.push_back(d);

  Canvas svg;
  index_t y = margin;
  // Title: the root, then the view and how it was made, then the notes.
  const std::string title = title_of(view, options);
  y += 18;
  svg.text(margin, y, title, 18, "font-weight=\"bold\" class=\"title\"");
  std::string subtitle = "view " + shape_line(view.names(), view.shape()) + "  \xC2\xB7  " +
                         (options.ops.empty() ? "the root view" : options.ops);
  if (options.member) subtitle += "  \xC2\xB7  rank " + std::to_string(options.member->rank) + " outlined";
  y += 24;
  svg.text(margin, y, subtitle, 13, "fill=\"#333333\" class=\"subtitle\"");
  std::vector<SvgOptions::Note> notes;
  if (options.topology) notes = placement_notes(*options.topology);
  notes.insert(notes.end(), options.notes.begin(), options.notes.end());
  for (const SvgOptions::Note& note : notes) {
    y += 20;
    svg.text(margin, y, note.text, 13, "class=\"note\" data-note=\"" + xml(note.kind) + "\"");
  }
  y = dim_lines(svg, view, options, y + 8) + 28;

  // The panels, left to right, wrapping past max_width.
  constexpr index_t max_width = 1600, panel_space = 40;
  index_t px = margin, py = y, row_height = 0;
  for (const std::size_t d : drawn) {
    const Canvas p = options.topology ? levels_panel(view, d, options) : panel(view, d, options);
    if (px > margin && px + p.width > max_width) {
      px = margin;
      py += row_height + panel_space;
      row_height = 0;
    }
    svg.body += "<g class=\"panel\" data-dim=\"" + xml(view.dims()[d].name) + "\" transform=\"translate(" +
                std::to_string(px) + "," + std::to_string(py) + ")\">\n" + p.body + "</g>\n";
    svg.fit(px + p.width, py + p.height);
    px += p.width + panel_space;
    row_height = std::max(row_height, p.height);
  }

  const index_t width = svg.width + margin, height = svg.height + margin;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
  out += "<title>" + xml("devmesh-plan: " + title) + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\" class=\"background\"/>\n";
  out += svg.body;
  out += "</svg>\n";
  return out;
}

}  // namespace devmesh::plan
