// `charkit help [COMMAND [SUB]]` and `charkit completion bash`: both read the
// CLI11 command tree, so they follow every command added elsewhere.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "charkit/core/json.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"

namespace charkit::app {
namespace {

std::vector<const CLI::App*> named_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); });
}

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* s : named_subcommands(app))
    if (s->get_name() == name) return s;
  return nullptr;
}

int run_help(const CLI::App& root, const std::vector<std::string>& names) {
  const CLI::App* a = &root;
  std::string path = "charkit";
  for (const std::string& n : names) {
    const CLI::App* s = find_subcommand(*a, n);
    if (!s) {
      std::string valid;
      for (const CLI::App* c : named_subcommands(*a))
        valid += (valid.empty() ? "" : ", ") + c->get_name();
      return report_error("", codes::USAGE,
                          "'" + path + "' has no command '" + n + "'; commands: " + valid,
                          kExitUsage);
    }
    a = s;
    path += " " + n;
  }
  if (output_mode().json)
    print_json(core::Json{{"command", path}, {"help", help_text(*a)}});
  else
    std::cout << help_text(*a);
  return kExitOk;
}

// A description's first clause, without its parenthesised asides: up to
// ": ", "; " or ". " (not the dot of "1.5"); a leading "Step N: " is skipped.
std::string summary(const std::string& description) {
  std::string text;
  int depth = 0;
  for (char c : description) {
    if (c == '(') ++depth;
    if (depth == 0) text += c;
    if (c == ')' && depth > 0 && --depth == 0 && !text.empty() && text.back() == ' ')
      text.pop_back();  // the space before the aside
  }
  if (text.rfind("Step ", 0) == 0 && text.size() > 8 && text[6] == ':') {
    text.erase(0, 8);
    if (text[0] >= 'a' && text[0] <= 'z') text[0] = static_cast<char>(text[0] - 'a' + 'A');
  }
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if ((text[i] == ':' || text[i] == ';' || text[i] == '.') && text[i + 1] == ' ') {
      text.resize(i);
      break;
    }
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// One line per command for `charkit help --commands`: its path, its
// positional arguments (FILE..., [DIR]) and summary() of its description.
// README.md's command list is this output (a test compares).
void collect_commands(const CLI::App& app, const std::string& path,
                      std::vector<std::pair<std::string, std::string>>& out) {
  const auto subs = named_subcommands(app);
  if (subs.empty()) {
    std::string synopsis = path;
    for (const CLI::Option* o : app.get_options()) {
      if (!o->get_positional()) continue;
      std::string word = o->get_type_name().empty() ? o->get_name() : o->get_type_name();
      word.resize(std::min(word.size(), word.find(':')));  // CLI11 appends checks (":{bash}")
      if (o->get_items_expected_max() > 1) word += "...";
      synopsis += " " + (o->get_required() ? word : "[" + word + "]");
    }
    out.emplace_back(synopsis, summary(app.get_description()));
    return;
  }
  for (const CLI::App* s : subs)
    if (!s->get_group().empty()) collect_commands(*s, path + " " + s->get_name(), out);
}

std::string command_list(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::size_t width = 0;
  for (const auto& [synopsis, text] : lines) width = std::max(width, synopsis.size());
  std::string out;
  for (const auto& [synopsis, text] : lines)
    out += synopsis + std::string(width + 2 - synopsis.size(), ' ') + text + "\n";
  return out;
}

// The words bash may complete after `charkit PATH`: its sub-commands and its options.
std::string completion_words(const CLI::App& app) {
  std::string cmds, opts;
  auto add = [](std::string& list, const std::string& w) { list += (list.empty() ? "" : " ") + w; };
  for (const CLI::App* s : named_subcommands(app)) add(cmds, s->get_name());
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden: a former spelling (docs/cli.md)
    for (const std::string& l : o->get_lnames()) add(opts, "--" + l);
    for (const std::string& s : o->get_snames()) add(opts, "-" + s);
  }
  return "cmds=\"" + cmds + "\" opts=\"" + opts + "\"";
}

void collect_cases(const CLI::App& app, const std::string& path, std::string& paths,
                   std::string& cases) {
  cases += "    \"" + path + "\") " + completion_words(app) + " ;;\n";
  for (const CLI::App* s : named_subcommands(app)) {
    std::string sub = path.empty() ? s->get_name() : path + " " + s->get_name();
    paths += (paths.empty() ? "" : "|") + ("\"" + sub + "\"");
    collect_cases(*s, sub, paths, cases);
  }
}

std::string bash_completion(const CLI::App& root) {
  std::string paths, cases;
  collect_cases(root, "", paths, cases);
  return "# bash completion for charkit, generated by 'charkit completion bash'.\n"
         "# Load it with: source <(charkit completion bash)\n"
         "_charkit() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" next w i cmds opts\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=\"${COMP_WORDS[i]}\"\n"
         "    [[ \"$w\" == -* ]] && continue\n"
         "    next=\"${path:+$path }$w\"\n"
         "    case \"$next\" in\n"
         "    " +
         paths +
         ") path=\"$next\" ;;\n"
         "    esac\n"
         "  done\n"
         "  case \"$path\" in\n" +
         cases +
         "    *) cmds=\"\" opts=\"\" ;;\n"
         "  esac\n"
         "  if [[ \"$cur\" == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
         "  else\n"
         "    COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\"))\n"
         "  fi\n"
         "}\n"
         "complete -o default -F _charkit charkit\n";
}

}  // namespace

void add_help_commands(CLI::App& app, int& exit_code) {
  auto names = std::make_shared<std::vector<std::string>>();
  CLI::App* help = app.add_subcommand("help", "Print the help of charkit or of one command");
  help->add_option("command", *names, "A command and its sub-command, e.g. 'bem validate'")
      ->type_name("COMMAND");
  auto commands = std::make_shared<bool>(false);
  help->add_flag("--commands", *commands,
                 "List every command, one line each: its arguments and what it does");
  CLI::App* root = &app;
  help->callback([root, names, commands, &exit_code] {
    if (!*commands) {
      exit_code = run_help(*root, *names);
      return;
    }
    if (!names->empty()) {
      exit_code = report_error("", codes::USAGE, "--commands lists every command; give no COMMAND",
                               kExitUsage);
      return;
    }
    std::vector<std::pair<std::string, std::string>> lines;
    collect_commands(*root, "charkit", lines);
    if (output_mode().json) {
      core::Json list = core::Json::array();
      for (const auto& [synopsis, text] : lines)
        list.push_back(core::Json{{"synopsis", synopsis}, {"summary", text}});
      print_json(core::Json{{"commands", std::move(list)}});
    } else {
      std::cout << command_list(lines);
    }
    exit_code = kExitOk;
  });

  auto shell = std::make_shared<std::string>();
  CLI::App* completion =
      app.add_subcommand("completion", "Print a shell completion script for charkit");
  completion->add_option("shell", *shell, "The shell (bash)")
      ->required()
      ->check(CLI::IsMember({"bash"}))
      ->type_name("SHELL");
  completion->footer("Load it with: source <(charkit completion bash)");
  completion->callback([root, shell, &exit_code] {
    if (output_mode().json)
      print_json(core::Json{{"shell", "bash"}, {"script", bash_completion(*root)}});
    else
      std::cout << bash_completion(*root);
    exit_code = kExitOk;
  });
}

}  // namespace charkit::app
