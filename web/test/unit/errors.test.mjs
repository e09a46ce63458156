// Errors as the console shows them to people (web/src/api.js): plain
// sentences for the common codes, the server's message made a sentence for
// the others; the code itself is shown apart, small.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError, asSentence } from "../../src/api.js";

test("known codes read as plain sentences", () => {
  const e = new ApiError(400, "EMPTY_BODY", "the request body must hold the file");
  assert.equal(e.sentence(), "The file is empty.");
  assert.equal(e.describe(), "EMPTY_BODY: the request body must hold the file (HTTP 400)");
  assert.equal(new ApiError(413, "UPLOAD_TOO_LARGE", "over 512 MiB").sentence(),
    "The file is larger than this server accepts.");
});

test("other codes: the server's message as a sentence", () => {
  assert.equal(new ApiError(409, "SOMETHING_NEW", "the record is busy").sentence(), "The record is busy.");
  assert.equal(asSentence("already a sentence."), "Already a sentence.");
  assert.equal(asSentence("  why? "), "Why?");
  assert.equal(asSentence(""), "Something went wrong.");
  assert.equal(new ApiError(500, "", "").sentence(), "HTTP 500.");
});
