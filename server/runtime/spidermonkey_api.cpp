// SPDX-License-Identifier: Apache-2.0
// The globals of a fresh realm: `Enact` and `console` (docs/actions.md "The `Enact` API"). Natives
// report errors the JSAPI way: they set a pending exception and return false; none throws.
#include "runtime/spidermonkey_realm.hpp"

#include <malloc.h>

#include <js/Array.h>
#include <js/ArrayBuffer.h>
#include <js/CompilationAndEvaluation.h>
#include <js/Conversions.h>
#include <js/Initialization.h>
#include <js/JSON.h>
#include <js/MemoryCallbacks.h>
#include <js/Object.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <js/SourceText.h>
#include <js/Stack.h>
#include <js/String.h>
#include <js/experimental/TypedData.h>
#include <jsapi.h>
#include <jsfriendapi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "runtime/channel.hpp"
#include "runtime/run_text.hpp"
#include "runtime/spidermonkey_realm.hpp"
#include "runtime/utf8.hpp"

namespace enact::runtime::spidermonkey::detail {

using sandbox::outcome;

// --- values and text -------------------------------------------------------------------------

// UTF-16 as UTF-8; a lone surrogate becomes U+FFFD.
void append_utf16(std::string& out, std::u16string_view in) {
  for (size_t i = 0; i < in.size(); ++i) {
    uint32_t c = in[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < in.size() && in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (in[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    utf8::append(out, c);
  }
}

// The string as UTF-8 (lone surrogates as U+FFFD); false when the engine failed (OOM).
bool utf8_of(JSContext* cx, JS::HandleString str, std::string& out) {
  JSLinearString* linear = JS_EnsureLinearString(cx, str);
  if (linear == nullptr)
    return false;
  out.resize(JS::GetDeflatedUTF8StringLength(linear));
  out.resize(JS::DeflateStringToUTF8Buffer(linear, mozilla::Span<char>(out.data(), out.size())));
  return true;
}

bool json_chunk(const char16_t* buf, uint32_t len, void* data) {
  append_utf16(*static_cast<std::string*>(data), std::u16string_view(buf, len));
  return true;
}

// Well-formed JSON.stringify writes a lone surrogate as a \uD8xx escape, which strict JSON
// parsers (the server's among them) refuse; it becomes U+FFFD, as Duktape's output has it.
std::string without_lone_surrogates(std::string json) {
  std::string out;
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] != '\\' || i + 1 >= json.size()) {
      out += json[i];
      continue;
    }
    const bool surrogate = json[i + 1] == 'u' && i + 5 < json.size() && (json[i + 2] == 'd' || json[i + 2] == 'D') &&
                           std::string_view("89abcdefABCDEF").find(json[i + 3]) != std::string_view::npos;
    if (surrogate) {
      out += "\xEF\xBF\xBD";
      i += 5;
    } else {
      out.append(json, i, 2);  // any other escape, kept whole so its second character is not read
      ++i;
    }
  }
  return out;
}

// JSON.stringify(value) as UTF-8; `defined` false when JSON has nothing for it (undefined, a
// function). False with an exception pending when stringify threw (a cycle, a BigInt).
bool stringify(JSContext* cx, JS::HandleValue value, std::string& out, bool& defined) {
  out.clear();
  JS::RootedValue v(cx, value);
  if (!JS_Stringify(cx, &v, nullptr, JS::NullHandleValue, json_chunk, &out))
    return false;
  defined = !out.empty();
  if (out.find("\\u") != std::string::npos)
    out = without_lone_surrogates(std::move(out));
  return true;
}

bool parse_json(JSContext* cx, std::string_view text, JS::MutableHandleValue out) {
  JS::RootedString s(cx, JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(text.data(), text.size())));
  return s != nullptr && JS_ParseJSON(cx, s, out);
}

// Throws `new <kind>(message)` built from the realm's original constructor.
bool throw_error(JSContext* cx, JSProtoKey kind, const std::string& message) {
  JS::RootedObject ctor(cx);
  JS::RootedString text(cx, JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(message.data(), message.size())));
  if (text == nullptr || !JS_GetClassObject(cx, kind, &ctor))
    return false;
  JS::RootedValueArray<1> args(cx);
  args[0].setString(text);
  JS::RootedValue constructor(cx, JS::ObjectValue(*ctor));
  JS::RootedObject error(cx);
  if (!JS::Construct(cx, constructor, args, &error))
    return false;
  JS::RootedValue thrown(cx, JS::ObjectValue(*error));
  JS_SetPendingException(cx, thrown);
  return false;
}

bool is_kind(JSContext* cx, JS::HandleObject obj, js::ESClass kind) {
  js::ESClass cls = js::ESClass::Other;
  return JS::GetBuiltinClass(cx, obj, &cls) && cls == kind;
}

bool is_buffer(JSObject* obj) { return JS_IsArrayBufferViewObject(obj) || JS::IsArrayBufferObject(obj); }

// --- console ---------------------------------------------------------------------------------

// Strings as they are, plain objects and arrays as JSON, everything else through String().
void append_value(JSContext* cx, JS::HandleValue v, std::string& line) {
  std::string piece;
  if (v.isObject()) {
    JS::RootedObject obj(cx, &v.toObject());
    bool defined = false;
    if (!JS::IsCallable(obj) && !is_kind(cx, obj, js::ESClass::Error) && stringify(cx, v, piece, defined) && defined) {
      line += piece;
      return;
    }
    JS_ClearPendingException(cx);
  }
  JS::RootedString str(cx, v.isSymbol() ? JS_ValueToSource(cx, v) : JS::ToString(cx, v));
  if (str != nullptr && utf8_of(cx, str, piece)) {
    line += piece;
  } else {
    JS_ClearPendingException(cx);
    line += "[unprintable]";
  }
}

bool console_log(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  args.rval().setUndefined();
  if (s->out.logs_truncated)
    return true;
  std::string line;
  for (unsigned i = 0; i < args.length() && line.size() <= s->req->lim.log_bytes; ++i) {
    if (i > 0)
      line += ' ';
    append_value(cx, args[i], line);
  }
  sandbox::text::append_log(s->out, s->req->lim.log_bytes, line);
  return true;
}

// --- Enact -----------------------------------------------------------------------------------

bool set_response(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  std::string json;
  bool defined = false;
  if (!stringify(cx, args.get(0), json, defined))
    return false;
  if (!defined)
    json = "null";  // values JSON cannot express (undefined, functions)
  if (json.size() > s->req->lim.output_bytes) {
    s->output_exceeded = true;
    return throw_error(cx, JSProto_RangeError,
                       sandbox::text::response_too_large(json.size(), s->req->lim.output_bytes));
  }
  s->out.response_json = std::move(json);
  s->out.has_response = true;
  args.rval().setUndefined();
  return true;
}

// A string starting with 0x is hex bytes, any other string its UTF-8 bytes; buffers as they are.
bool input_bytes(JSContext* cx, JS::HandleValue v, const char* what, bytes& out) {
  if (v.isString()) {
    JS::RootedString str(cx, v.toString());
    std::string text;
    std::string error;
    if (!utf8_of(cx, str, text))
      return false;
    return sandbox::text::string_bytes(text, what, out, error) || throw_error(cx, JSProto_TypeError, error);
  }
  if (v.isObject() && is_buffer(&v.toObject())) {
    JSObject* obj = &v.toObject();
    const JS::AutoCheckCannotGC nogc;
    bool shared = false;
    const bool view = JS_IsArrayBufferViewObject(obj);
    const auto* p = static_cast<const uint8_t*>(view ? JS_GetArrayBufferViewData(obj, &shared, nogc)
                                                     : JS::GetArrayBufferData(obj, &shared, nogc));
    const size_t n = view ? JS_GetArrayBufferViewByteLength(obj) : JS::GetArrayBufferByteLength(obj);
    out = p == nullptr ? bytes() : bytes(p, p + n);
    return true;
  }
  return throw_error(cx, JSProto_TypeError, sandbox::text::expected_bytes(what));
}

template <bool Keccak>
bool hash(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  if (current(cx) == nullptr)
    return false;
  bytes in;
  if (!input_bytes(cx, args.get(0), Keccak ? "Enact.keccak256" : "Enact.sha256", in))
    return false;
  const std::string digest = sandbox::text::digest_hex(Keccak, in);
  JSString* str = JS_NewStringCopyN(cx, digest.data(), digest.size());
  if (str == nullptr)
    return false;
  args.rval().setString(str);
  return true;
}

bool capability(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  const std::string_view method = sandbox::kCapabilities[js::GetFunctionNativeReserved(&args.callee(), 0).toInt32()];
  const JS::HandleValue arg = args.get(0);
  bool array = false;
  if (arg.isObject()) {
    JS::RootedObject obj(cx, &arg.toObject());
    if (!JS::IsArrayObject(cx, obj, &array))
      return false;
    array = array || JS::IsCallable(obj) || is_buffer(obj);
  }
  if (!arg.isObject() || array)
    return throw_error(cx, JSProto_TypeError, sandbox::text::expected_object(method));
  std::string json;
  bool defined = false;
  if (!stringify(cx, arg, json, defined))
    return false;
  if (json.size() > channel::kMaxCallArgsBytes)
    return throw_error(cx, JSProto_RangeError, sandbox::text::args_too_large(method));
  const sandbox::call_answer answer = (*s->parent)(method, json);
  if (!answer.ok)
    return throw_error(cx, JSProto_Error, answer.payload);
  return parse_json(cx, answer.payload, args.rval());
}

// --- Enact.fetch -----------------------------------------------------------------------------
// Made by the parent (fetch.hpp). As fetch() does, Enact.fetch answers with a promise, and so do
// the response's text() and json(); every refusal is a rejection the action's try/catch around
// `await` sees.

// A native step's outcome as a promise: its value resolved, or the exception it raised rejected.
// False (no promise) only when the engine stopped the run, which nothing may catch.
bool settle_promise(JSContext* cx, bool ok, JS::MutableHandleValue v) {
  if (!ok) {
    if (!JS_IsExceptionPending(cx) || !JS_GetPendingException(cx, v))
      return false;
    JS_ClearPendingException(cx);
  }
  JSObject* promise = ok ? JS::CallOriginalPromiseResolve(cx, v) : JS::CallOriginalPromiseReject(cx, v);
  if (promise == nullptr)
    return false;
  v.setObject(*promise);
  return true;
}

// text() and json(): reserved slot 0 holds the body, slot 1 whether to parse it.
bool fetch_body(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  if (current(cx) == nullptr)
    return false;
  JS::RootedValue body(cx, js::GetFunctionNativeReserved(&args.callee(), 0));
  bool ok = true;
  if (js::GetFunctionNativeReserved(&args.callee(), 1).toBoolean()) {
    JS::RootedString text(cx, body.toString());
    ok = JS_ParseJSON(cx, text, &body);
  }
  if (!settle_promise(cx, ok, &body))
    return false;
  args.rval().set(body);
  return true;
}

// Checks what the worker can, hands {url, init} to the parent, and builds the response.
bool fetch_response(JSContext* cx, const JS::CallArgs& args, run_state& s, JS::MutableHandleValue out) {
  if (!args.get(0).isString())
    return throw_error(cx, JSProto_TypeError, std::string(sandbox::kFetchUrlExpected));
  const JS::HandleValue init = args.get(1);
  bool array = false;
  if (init.isObject()) {
    JS::RootedObject obj(cx, &init.toObject());
    if (!JS::IsArrayObject(cx, obj, &array))
      return false;
    array = array || JS::IsCallable(obj) || is_buffer(obj);
  }
  if (!init.isNullOrUndefined() && (!init.isObject() || array))
    return throw_error(cx, JSProto_TypeError, std::string(sandbox::kFetchInitExpected));
  JS::RootedObject request(cx, JS_NewPlainObject(cx));
  if (request == nullptr || !JS_DefineProperty(cx, request, "url", args.get(0), JSPROP_ENUMERATE) ||
      (init.isObject() && !JS_DefineProperty(cx, request, "init", init, JSPROP_ENUMERATE))) {
    return false;
  }
  JS::RootedValue request_value(cx, JS::ObjectValue(*request));
  std::string json;
  bool defined = false;
  if (!stringify(cx, request_value, json, defined))
    return false;
  if (json.size() > channel::kMaxCallArgsBytes)
    return throw_error(cx, JSProto_RangeError, sandbox::text::args_too_large(sandbox::kFetchMethod));
  const sandbox::call_answer answer = (*s.parent)(sandbox::kFetchMethod, json);
  if (!answer.ok)
    return throw_error(cx, JSProto_Error, answer.payload);
  if (!parse_json(cx, answer.payload, out))
    return false;
  if (!out.isObject())
    return throw_error(cx, JSProto_Error, "fetch: malformed answer");
  JS::RootedObject response(cx, &out.toObject());
  JS::RootedValue body(cx);
  if (!JS_GetProperty(cx, response, "body", &body) || !JS_DeleteProperty(cx, response, "body"))
    return false;
  if (!body.isString())
    body.setString(JS_GetEmptyString(cx));
  for (const bool parse : {false, true}) {
    JSFunction* fn =
        js::DefineFunctionWithReserved(cx, response, parse ? "json" : "text", fetch_body, 0, JSPROP_ENUMERATE);
    if (fn == nullptr)
      return false;
    js::SetFunctionNativeReserved(JS_GetFunctionObject(fn), 0, body);
    js::SetFunctionNativeReserved(JS_GetFunctionObject(fn), 1, JS::BooleanValue(parse));
  }
  return true;
}

bool enact_fetch(JSContext* cx, unsigned argc, JS::Value* vp) {
  const JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  run_state* s = current(cx);
  if (s == nullptr)
    return false;
  JS::RootedValue response(cx);
  if (!settle_promise(cx, fetch_response(cx, args, *s, &response), &response))
    return false;
  args.rval().set(response);
  return true;
}

bool define_function(JSContext* cx, JS::HandleObject on, const char* name, JSNative fn, unsigned nargs) {
  return JS_DefineFunction(cx, on, name, fn, nargs, JSPROP_ENUMERATE) != nullptr;
}

bool install_globals(JSContext* cx, JS::HandleObject global) {
  JS::RootedObject enact(cx, JS_NewPlainObject(cx));
  if (enact == nullptr || !define_function(cx, enact, "setResponse", set_response, 1) ||
      !define_function(cx, enact, "sha256", hash<false>, 1) ||
      !define_function(cx, enact, "keccak256", hash<true>, 1)) {
    return false;
  }
  for (int i = 0; i < static_cast<int>(std::size(sandbox::kCapabilities)); ++i) {
    const std::string name(sandbox::kCapabilities[i]);
    JSFunction* fn = js::DefineFunctionWithReserved(cx, enact, name.c_str(), capability, 1, JSPROP_ENUMERATE);
    if (fn == nullptr)
      return false;
    js::SetFunctionNativeReserved(JS_GetFunctionObject(fn), 0, JS::Int32Value(i));
  }
  if (!define_function(cx, enact, "fetch", enact_fetch, 2))
    return false;
  JS::RootedObject console(cx, JS_NewPlainObject(cx));
  if (console == nullptr)
    return false;
  for (const char* name : {"log", "info", "warn", "error"}) {
    if (!define_function(cx, console, name, console_log, 0))
      return false;
  }
  return JS_FreezeObject(cx, enact) && JS_FreezeObject(cx, console) &&
         JS_DefineProperty(cx, global, "Enact", enact, JSPROP_ENUMERATE) &&
         JS_DefineProperty(cx, global, "console", console, JSPROP_ENUMERATE);
}

}  // namespace enact::runtime::spidermonkey::detail
