#include "parasol/sched/host_file.h"

#include <set>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol::sched {
namespace {

// Host names as mpirun's --host list takes them (no ',' ':' or blanks).
bool GoodHostName(std::string_view name) {
  return !name.empty() && name.find_first_not_of(
                              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                              "0123456789.-_") == std::string_view::npos;
}

Host ParseHost(const LineReader& in, std::string_view line) {
  size_t pos = 0;
  Host h;
  const std::string_view name = NextField(line, pos);
  if (!GoodHostName(name)) in.Fail(fmt::format("host '{}': use letters, digits, '.', '-' and '_'", name));
  h.name = name;
  for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
    if (!f.starts_with("slots=")) in.Fail(fmt::format("'{}': expected slots=N", f));
    h.slots = in.NumberIn<int>(f.substr(6), "slots", 1, 1'000'000);
  }
  return h;
}

}  // namespace

std::vector<Host> ReadHostFile(const std::string& path) {
  LineReader in(path, {.comment = '#', .skip_blank = true, .trailing_comment = true});
  std::vector<Host> hosts;
  std::set<std::string> names;
  for (std::string_view line; in.Next(&line);) {
    hosts.push_back(ParseHost(in, line));
    if (!names.insert(hosts.back().name).second) in.Fail(fmt::format("host {} twice", hosts.back().name));
    if (hosts.back().slots != hosts.front().slots) {
      in.Fail(fmt::format("{} slots; {} has {} (every host needs the same number)", hosts.back().slots,
                          hosts.front().name, hosts.front().slots));
    }
  }
  if (hosts.empty()) throw ParseError(path, in.line_number(), "no hosts");
  return hosts;
}

}  // namespace parasol::sched
