'use strict';
// Load the twistarena.v1 contract straight from the .proto files at run time
// (no generated code) and convert the well-known types the contract uses.

const path = require('path');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_FILES = [
  'twistarena/v1/match.proto',
  'twistarena/v1/play.proto',
  'twistarena/v1/observations.proto',
];

// The repository's proto/ folder: the include root of "twistarena/v1/*.proto".
const DEFAULT_PROTO_DIR = path.resolve(__dirname, '..', '..', '..', 'proto');

const LOADER_OPTIONS = {
  keepCase: true, // field names exactly as in the .proto files (decision_id, not decisionId)
  longs: String, // uint64 (decision_id, seq, seed) as decimal strings: no precision loss
  enums: String, // enum values by name ("ILLEGAL_ACTION", "END_REASON_COMPLETED")
  defaults: true, // absent proto3 fields come back as their zero values
  oneofs: true, // a oneof's name tells which member is set (msg.msg === "decision")
};

function load(protoDir) {
  const dir = protoDir || process.env.TWISTARENA_PROTO_DIR || DEFAULT_PROTO_DIR;
  const probe = path.join(dir, PROTO_FILES[0]);
  if (!fs.existsSync(probe)) {
    throw new Error(`cannot find ${probe}; pass --proto-dir DIR (the folder holding twistarena/v1/)`);
  }
  const definition = protoLoader.loadSync(PROTO_FILES, { ...LOADER_OPTIONS, includeDirs: [dir] });
  const pkg = grpc.loadPackageDefinition(definition).twistarena.v1;
  return { Play: pkg.Play, Matches: pkg.Matches, Watch: pkg.Watch, dir };
}

// google.protobuf.Value -> plain JavaScript value. protobufjs ships its own
// descriptors of the well-known types, whose field names are camelCase
// (numberValue) even with keepCase; both spellings are accepted here.
function valueToJs(value) {
  if (value === null || value === undefined) return null;
  const get = (snake, camel) => (value[camel] !== undefined ? value[camel] : value[snake]);
  switch (value.kind) {
    case 'nullValue':
    case 'null_value':
      return null;
    case 'numberValue':
    case 'number_value':
      return get('number_value', 'numberValue');
    case 'stringValue':
    case 'string_value':
      return get('string_value', 'stringValue');
    case 'boolValue':
    case 'bool_value':
      return get('bool_value', 'boolValue');
    case 'structValue':
    case 'struct_value':
      return structToJs(get('struct_value', 'structValue'));
    case 'listValue':
    case 'list_value': {
      const list = get('list_value', 'listValue');
      return ((list && list.values) || []).map(valueToJs);
    }
    default:
      return null;
  }
}

// google.protobuf.Struct -> plain JavaScript object (payloads, event data, game options).
function structToJs(struct) {
  const out = {};
  if (!struct || !struct.fields) return out;
  for (const [key, value] of Object.entries(struct.fields)) out[key] = valueToJs(value);
  return out;
}

module.exports = { load, structToJs, valueToJs, PROTO_FILES, DEFAULT_PROTO_DIR };
