// devmesh-plan's readable picture.
//
//   root mesh dp=2 tp=4 (8 ranks, world 8)
//        tp=0 tp=1 tp=2 tp=3        the root index grid, last dim across,
//   dp=0    0    1    2    3        showing each index's parent rank
//   dp=1    4    5    6    7
//
//   view: dp=2 tp=4
//   dp = 2:4                        per dim: its layout and its groups
//     [0,4] [1,5] [2,6] [3,7]

#include <algorithm>
#include <string>
#include <vector>

#include "plan.hpp"

namespace devmesh::plan {
namespace {

std::string pad_left(const std::string& s, std::size_t width) {
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
  return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
}

// "[0,4]"
std::string list(const std::vector<index_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

// "dp=2 tp=4"
std::string shape_line(const std::vector<std::string>& names, const std::vector<index_t>& sizes) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? " " : "") + names[i] + "=" + std::to_string(sizes[i]);
  return out;
}

// Rows are the root's leading dims (labelled by their coordinates), columns
// its last dim; each cell is the parent rank of that root index.
void print_grid(std::ostream& os, const View& view) {
  const std::vector<std::string>& names = view.root_names();
  const std::vector<index_t>& shape = view.root_shape();
  const index_t cols = shape.back();
  const index_t rows = view.root_size() / cols;

  std::vector<std::string> header, labels(static_cast<std::size_t>(rows));
  std::size_t cell = 0, label_width = 0;
  for (index_t c = 0; c < cols; ++c) {
    header.push_back(names.back() + "=" + std::to_string(c));
    cell = std::max(cell, header.back().size());
  }
  for (index_t x = 0; x < view.root_size(); ++x)
    cell = std::max(cell, std::to_string(view.parent_rank(x)).size());
  for (index_t r = 0; r < rows; ++r) {
    std::string& label = labels[static_cast<std::size_t>(r)];
    index_t rest = r;
    for (std::size_t i = shape.size() - 1; i-- > 0;) {
      label = names[i] + "=" + std::to_string(rest % shape[i]) + (label.empty() ? "" : " ") + label;
      rest /= shape[i];
    }
    label_width = std::max(label_width, label.size());
  }

  auto line = [&](const std::string& label, auto&& cell_text) {
    std::string out = label_width ? pad_right(label, label_width) + " " : "";
    for (index_t c = 0; c < cols; ++c) out += (c ? " " : "") + pad_left(cell_text(c), cell);
    os << out << '\n';
  };
  line("", [&](index_t c) { return header[static_cast<std::size_t>(c)]; });
  for (index_t r = 0; r < rows; ++r)
    line(labels[static_cast<std::size_t>(r)],
         [&](index_t c) { return std::to_string(view.parent_rank(r * cols + c)); });
}

}  // namespace

void print_text(std::ostream& os, const View& view, const std::optional<Member>& member) {
  const std::string view_line = "view: " + shape_line(view.names(), view.shape());
  if (member) {
    os << "rank " << member->rank << " (root index " << member->index << ") in " << view_line << '\n'
       << "coordinate " << list(view.coordinate(member->index)) << '\n';
    for (std::size_t d = 0; d < view.ndim(); ++d)
      os << view.dims()[d].name << " = " << to_string(view.dims()[d].layout) << "  local rank "
         << view.local_rank(d, member->index) << "  group " << list(view.group(d, member->index)) << '\n';
    return;
  }

  const index_t w = view.root_size();
  os << "root mesh " << shape_line(view.root_names(), view.root_shape()) << " (" << w << " ranks, world "
     << view.world() << ")\n";
  if (w <= max_drawn_ranks) {
    print_grid(os, view);
  } else {
    os << "(grid not drawn for more than " << max_drawn_ranks << " ranks)\n";
  }
  os << '\n' << view_line << '\n';
  for (std::size_t d = 0; d < view.ndim(); ++d) {
    const Dim& dim = view.dims()[d];
    os << dim.name << " = " << to_string(dim.layout) << '\n';
    if (w > max_drawn_ranks) {
      os << "  " << w / dim.size() << " groups of " << dim.size() << " ranks (use --rank R to see one)\n";
      continue;
    }
    std::string groups;
    for (const std::vector<index_t>& g : view.all_groups(d)) groups += " " + list(g);
    os << ' ' << groups << '\n';
  }
}

}  // namespace devmesh::plan
