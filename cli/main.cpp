// SPDX-License-Identifier: Apache-2.0
// `enact`: the SDK's command-line client. Each subcommand reads files or stdin and prints its
// result as readable text, or with --json as one JSON document (output.hpp). Bad input: one line on stderr naming what
// is wrong, exit 1; usage errors exit 2.
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "enact/error.hpp"
#include "output.hpp"

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
      "  --json                       (after a command) print one JSON document instead of text\n"
      "  completion bash|zsh          a shell completion script: source <(enact completion bash)\n"
      "\nEvery command prints readable text, or with --json one JSON object (streams: one JSON\n"
      "line per object); errors go to stderr in both forms.\n"
      "\ncore commands talk to the core service at --url URL (default $ENACT_URL, else\n"
      "http://127.0.0.1:8080) with the API key from --key-file FILE or $ENACT_API_KEY (never from\n"
      "the command line).\n",
      out);
}

// `enact completion bash|zsh`: a completion script made from the command table, so it never
// falls behind it. Command words complete word by word; after a whole command, "-" completes its
// flags and anything else falls back to file names (most arguments are files).
std::string completion_script(const std::string& shell) {
  std::map<std::string, std::set<std::string>> next;  // command words so far -> what may follow
  std::set<std::string> leaves;
  const std::regex flag("--[a-z0-9][a-z0-9-]*");
  for (const auto& c : table()) {
    std::string node;
    size_t start = 0;
    while (start <= c.name.size()) {
      const size_t sp = c.name.find(' ', start);
      const std::string word = c.name.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
      next[node].insert(word);
      node += (node.empty() ? "" : " ") + word;
      if (sp == std::string::npos)
        break;
      start = sp + 1;
    }
    leaves.insert(c.name);
    auto& flags = next[c.name];
    for (std::sregex_iterator it(c.usage.begin(), c.usage.end(), flag), end; it != end; ++it)
      flags.insert(it->str());
    flags.insert("--help");
    flags.insert("--json");
  }
  std::string out =
      "# " + shell + " completion for enact " + ENACT_VERSION + ", made by `enact completion " + shell + "`.\n";
  if (shell == "zsh")
    out +=
        "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit; }\n"
        "autoload -U +X bashcompinit && bashcompinit\n";
  out += "_enact_next() {\n  case \"$1\" in\n";
  for (const auto& [node, words] : next) {
    out += "    \"" + node + "\") echo \"";
    std::string list;
    for (const auto& w : words)
      list += (list.empty() ? "" : " ") + w;
    out += list + "\" ;;\n";
  }
  out += "    *) return 1 ;;\n  esac\n}\n";
  out +=
      "_enact() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" node=\"\" i step\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    step=\"${node:+$node }${COMP_WORDS[i]}\"\n"
      "    _enact_next \"$step\" >/dev/null || break\n"
      "    node=\"$step\"\n"
      "  done\n"
      "  local words\n"
      "  words=\"$(_enact_next \"$node\")\"\n"
      "  [[ -z \"$node\" ]] && words=\"$words --help --version\"\n"
      "  if [[ \"$cur\" != -* ]]; then\n"
      "    local w keep=\"\"\n"
      "    for w in $words; do [[ \"$w\" == -* ]] || keep=\"$keep $w\"; done\n"
      "    words=\"$keep\"\n"
      "  fi\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}\n"
      "complete -o default -o bashdefault -F _enact enact\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  // `enact --json <command> …` as well as `enact <command> … --json`.
  while (!words.empty() && words[0] == "--json") {
    enact::cli::set_json_output(true);
    words.erase(words.begin());
  }
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_usage(words.empty() ? stderr : stdout);
    return words.empty() ? 2 : 0;
  }
  if (words[0] == "--version") {
    std::printf("enact %s\n", ENACT_VERSION);
    return 0;
  }
  if (words[0] == "completion") {
    if (words.size() != 2 || (words[1] != "bash" && words[1] != "zsh")) {
      std::fputs("usage: enact completion bash|zsh   (e.g. source <(enact completion bash))\n", stderr);
      return 2;
    }
    std::fputs(completion_script(words[1]).c_str(), stdout);
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
    // --json selects the output form of every command (output.hpp); the command sees the rest.
    std::vector<std::string> own;
    for (auto& w : rest) {
      if (w == "--json")
        enact::cli::set_json_output(true);
      else if (w.rfind("--json=", 0) == 0)
        throw enact::cli::usage_error("--json takes no value");
      else
        own.push_back(std::move(w));
    }
    return found->run(own);
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
