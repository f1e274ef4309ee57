// SPDX-License-Identifier: Apache-2.0
// `enact`: the SDK's command-line client. Each subcommand reads files or stdin and prints one
// result line. Bad input: one line on stderr naming what is wrong, exit 1; usage errors exit 2.
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "enact/error.hpp"

namespace {

using enact::cli::command;

const std::vector<command>& table() {
  static const std::vector<command> t = enact::cli::all_commands();
  return t;
}

void print_usage(std::FILE* out) {
  std::fputs("usage: enact <command> [args...]   (enact <command> --help for details)\n\ncommands:\n", out);
  for (const auto& c : table())
    std::fprintf(out, "  %-28s %s\n", c.name.c_str(), c.summary.c_str());
  std::fputs(
      "\noptions:\n"
      "  --help, -h                   this text (after a command: that command's usage)\n"
      "  --version                    print the version\n"
      "\ncore commands talk to the core service at --url URL (default $ENACT_URL, else\n"
      "http://127.0.0.1:8080) with the API key from --key-file FILE or $ENACT_API_KEY (never from\n"
      "the command line); each prints one JSON line.\n",
      out);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_usage(words.empty() ? stderr : stdout);
    return words.empty() ? 2 : 0;
  }
  if (words[0] == "--version") {
    std::printf("enact %s\n", ENACT_VERSION);
    return 0;
  }
  // Longest match of the command words ("typed-data hash" before "typed-data").
  const command* found = nullptr;
  size_t used = 0;
  for (const auto& c : table()) {
    size_t n = 0;
    std::string joined;
    for (; n < words.size(); ++n) {
      joined += (n ? " " : "") + words[n];
      if (joined == c.name) {
        if (n + 1 > used) {
          found = &c;
          used = n + 1;
        }
        break;
      }
      if (c.name.rfind(joined + " ", 0) != 0)
        break;
    }
  }
  if (!found) {
    std::fprintf(stderr, "enact: unknown command '%s' (see enact --help)\n", words[0].c_str());
    return 2;
  }
  std::vector<std::string> rest(words.begin() + static_cast<std::ptrdiff_t>(used), words.end());
  for (const auto& w : rest) {
    if (w == "--help" || w == "-h") {
      std::printf("usage: enact %s %s\n\n%s\n", found->name.c_str(), found->usage.c_str(), found->summary.c_str());
      return 0;
    }
  }
  try {
    return found->run(rest);
  } catch (const enact::cli::usage_error& e) {
    std::fprintf(stderr, "enact %s: %s\nusage: enact %s %s\n", found->name.c_str(), e.what(), found->name.c_str(),
                 found->usage.c_str());
    return 2;
  } catch (const enact::cli::input_error& e) {
    std::fprintf(stderr, "enact %s: %s\n", found->name.c_str(), e.what());
    return 1;
  } catch (const enact::Error& e) {
    std::fprintf(stderr, "enact %s: %s\n", found->name.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "enact %s: %s\n", found->name.c_str(), e.what());
    return 1;
  }
}
