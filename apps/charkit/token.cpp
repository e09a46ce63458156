// `charkit token create|list|revoke|sessions`: the API tokens of `charkit
// serve` and the browser sessions opened with them
// (docs/server.md §Access control). The catalogue is the server's: the same
// --data/--db options. A created token's secret goes to stdout once, alone
// on its line (or in --json), so that a script can capture it; everything
// else goes to stderr.
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "charkit/core/json.h"
#include "charkit/core/json_text.h"
#include "charkit/server/server.h"
#include "charkit/store/error_codes.h"
#include "charkit/store/tokens.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct TokenArgs {
  std::string data = "charkit-data";
  std::string db;
  std::string scope = "read";
  std::string name;
  std::int64_t id = 0;
  bool json = false;
  bool active_only = false;
  bool all = false;
};

core::Result<std::unique_ptr<store::Catalogue>> open_catalogue(const TokenArgs& a) {
  server::ServerOptions o;
  o.data_dir = a.data;
  o.db_url = a.db;
  if (a.db.empty()) {  // the SQLite file of the data folder: create the folder as serve does
    std::error_code ec;
    std::filesystem::create_directories(o.data_dir, ec);
  }
  return store::Catalogue::open(server::resolved_db_url(o));
}

Json token_json(const store::ApiToken& t) {
  return Json{{"id", t.id},
              {"name", t.name},
              {"scope", store::scope_name(t.scope)},
              {"hint", t.hint},
              {"createdAt", t.created_at},
              {"lastUsedAt", t.last_used_at ? Json(*t.last_used_at) : Json(nullptr)},
              {"revokedAt", t.revoked_at ? Json(*t.revoked_at) : Json(nullptr)}};
}

std::string iso_time(std::optional<std::int64_t> ms) {
  if (!ms) return "-";
  std::time_t s = static_cast<std::time_t>(*ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int fail(const char* /*what*/, const core::Error& e) {
  return report_error("", e, kExitUsage);
}

int run_create(const TokenArgs& a) {
  auto scope = store::parse_scope(a.scope);
  if (!scope)
    return report_error("", codes::USAGE, "--scope must be read, write or admin", kExitUsage);
  auto cat = open_catalogue(a);
  if (!cat) return fail("create", cat.error());
  auto t = store::TokenStore(**cat).create(*scope, a.name);
  if (!t) return fail("create", t.error());
  if (a.json) {
    Json j = token_json(t->token);
    j["secret"] = t->secret;
    print_json(std::move(j));
  } else {
    std::cout << t->secret << "\n";
    report_info("", "token " + std::to_string(t->token.id) + " (" +
                        std::string(store::scope_name(t->token.scope)) +
                        (t->token.name.empty() ? "" : ", '" + t->token.name + "'") +
                        ") created; the secret above is shown only now. Send it as "
                        "'Authorization: Bearer SECRET'.");
  }
  return kExitOk;
}

int run_list(const TokenArgs& a) {
  auto cat = open_catalogue(a);
  if (!cat) return fail("list", cat.error());
  auto list = store::TokenStore(**cat).list(!a.active_only);
  if (!list) return fail("list", list.error());
  if (a.json) {
    Json arr = Json::array();
    for (const auto& t : *list) arr.push_back(token_json(t));
    print_json(Json{{"tokens", arr}});
    return kExitOk;
  }
  if (list->empty()) {
    report_info("",
                "no tokens: the server is open to anyone who can reach it (on a "
                "non-loopback address it refuses to start without --insecure-open)");
    return kExitOk;
  }
  std::cout << "ID\tSCOPE\tHINT\tCREATED\tLAST USED\tREVOKED\tNAME\n";
  for (const auto& t : *list)
    std::cout << t.id << "\t" << store::scope_name(t.scope) << "\tckt_" << t.hint << "…\t"
              << iso_time(t.created_at) << "\t" << iso_time(t.last_used_at) << "\t"
              << iso_time(t.revoked_at) << "\t" << printable(t.name) << "\n";
  return kExitOk;
}

Json session_json(const store::ApiSession& s) {
  return Json{{"id", s.id},
              {"tokenId", s.token_id},
              {"tokenName", s.token_name},
              {"scope", store::scope_name(s.scope)},
              {"createdAt", s.created_at},
              {"expiresAt", s.expires_at},
              {"lastUsedAt", s.last_used_at ? Json(*s.last_used_at) : Json(nullptr)},
              {"revokedAt", s.revoked_at ? Json(*s.revoked_at) : Json(nullptr)}};
}

int run_sessions(const TokenArgs& a) {
  auto cat = open_catalogue(a);
  if (!cat) return fail("sessions", cat.error());
  auto list = store::TokenStore(**cat).list_sessions(a.all);
  if (!list) return fail("sessions", list.error());
  if (a.json) {
    Json arr = Json::array();
    for (const auto& s : *list) arr.push_back(session_json(s));
    print_json(Json{{"sessions", arr}});
    return kExitOk;
  }
  if (list->empty()) {
    report_info("", a.all ? "no browser sessions" : "no open browser sessions");
    return kExitOk;
  }
  std::cout << "ID\tTOKEN\tSCOPE\tCREATED\tEXPIRES\tLAST USED\tREVOKED\tTOKEN NAME\n";
  for (const auto& s : *list)
    std::cout << s.id << "\t" << s.token_id << "\t" << store::scope_name(s.scope) << "\t"
              << iso_time(s.created_at) << "\t" << iso_time(s.expires_at) << "\t"
              << iso_time(s.last_used_at) << "\t" << iso_time(s.revoked_at) << "\t"
              << printable(s.token_name) << "\n";
  return kExitOk;
}

int run_revoke(const TokenArgs& a) {
  auto cat = open_catalogue(a);
  if (!cat) return fail("revoke", cat.error());
  auto r = store::TokenStore(**cat).revoke(a.id);
  if (!r) return fail("revoke", r.error());
  if (!*r)
    return report_error("", store::codes::TOKEN_UNKNOWN,
                        "no active token with id " + std::to_string(a.id), kExitInvalid);
  report_info("", "token " + std::to_string(a.id) +
                      " and its browser sessions revoked (servers stop accepting them within "
                      "seconds)");
  return kExitOk;
}

void add_catalogue_options(CLI::App* cmd, TokenArgs& a) {
  cmd->add_option("--data", a.data,
                  "Data folder of the server (SQLite catalogue DIR/charkit.sqlite3)")
      ->capture_default_str();
  cmd->add_option("--db", a.db, "Catalogue URL of the server (sqlite:PATH or postgresql://…)");
}

}  // namespace

void add_token_commands(CLI::App& app, int& exit_code) {
  CLI::App* token = app.add_subcommand(
      "token",
      "API tokens of `charkit serve`: create, list and revoke bearer tokens; list "
      "browser sessions");
  token->require_subcommand(1);
  token->footer(
      "Once a token has been created (revoked ones count: revoking never reopens the server),\n"
      "the server requires one on every API request and WebSocket (Authorization: Bearer\n"
      "SECRET, or the session cookie of /login). Scopes: read (GET routes, streams, /metrics),\n"
      "write (also uploads and live publishing), admin (also DELETE). Only the SHA-256 of a\n"
      "secret is stored. Use the same --data/--db as `charkit serve`.");

  auto c = std::make_shared<TokenArgs>();
  CLI::App* create =
      token->add_subcommand("create", "Create a token; its secret goes to stdout, once");
  create->add_option("--scope", c->scope, "read, write or admin")
      ->capture_default_str()
      ->check(CLI::IsMember({"read", "write", "admin"}));
  create->add_option("--name", c->name, "A note for people: who or what uses it");
  create->add_flag("--json", c->json, "Print the token (with its secret) as JSON");
  add_catalogue_options(create, *c);
  create->footer("Example: TOKEN=$(charkit token create --scope write --name ci)");
  create->callback([c, &exit_code] { exit_code = run_create(*c); });

  auto l = std::make_shared<TokenArgs>();
  CLI::App* list = token->add_subcommand("list", "List tokens with their scope and last use");
  list->add_flag("--json", l->json, "JSON output");
  list->add_flag("--active", l->active_only, "Leave revoked tokens out");
  add_catalogue_options(list, *l);
  list->callback([l, &exit_code] { exit_code = run_list(*l); });

  auto se = std::make_shared<TokenArgs>();
  CLI::App* sessions = token->add_subcommand(
      "sessions", "List browser sessions (console logins): their token, expiry and last use");
  sessions->add_flag("--json", se->json, "JSON output");
  sessions->add_flag("--all", se->all,
                     "Also sessions that ended (logged out, expired, or their token revoked) "
                     "within the last day");
  add_catalogue_options(sessions, *se);
  sessions->footer(
      "A session is opened by logging in at /login with a token; the cookie holds the session's\n"
      "own secret (only its SHA-256 is stored), never the token. Logging out ends it; revoking\n"
      "its token with `charkit token revoke` ends all of the token's sessions.");
  sessions->callback([se, &exit_code] { exit_code = run_sessions(*se); });

  auto r = std::make_shared<TokenArgs>();
  CLI::App* revoke = token->add_subcommand("revoke", "Revoke a token (and its sessions) by id");
  revoke->add_option("ID", r->id, "The token's id (from `charkit token list`)")->required();
  add_catalogue_options(revoke, *r);
  revoke->footer("Exit status: 0 revoked, 1 no active token with this id, 2 database error.");
  revoke->callback([r, &exit_code] { exit_code = run_revoke(*r); });
}

}  // namespace charkit::app
