// SPDX-License-Identifier: Apache-2.0
// ABI decoding (codec/abi.hpp). The input's first byte selects a type list from the table below
// (tuples, dynamic and fixed arrays, nested; the lists of tests/vectors/abi.json calls among
// them); the rest is the data. Never crashes; a decoded value re-encodes, and decoding that
// encoding gives the same values back (the decoder also accepts non-canonical layouts, such as
// gaps or shared tails, so the bytes themselves need not match); the JSON bridge round trips.
#include <array>
#include <vector>

#include "enact/codec/abi.hpp"
#include "enact/codec/abi_json.hpp"
#include "fuzz.hpp"

using namespace enact;

namespace {

// make_corpus.py reads this table (between the BEGIN and END lines) to build the seeds: keep one
// string literal per line.
// BEGIN abi type table
constexpr std::array kTypeLists = {
    "uint256",
    "int8",
    "address",
    "bool",
    "bytes32",
    "bytes",
    "string",
    "uint8[]",
    "int240[]",
    "bytes32[3]",
    "string[]",
    "bytes[2]",
    "uint256[][]",
    "address,uint256",
    "uint256,string",
    "uint256,uint32[],bytes10,bytes",
    "uint256[][],string[]",
    "(bytes5[],bytes32),int248",
    "bytes,bool,uint256[]",
    "bytes10[],bytes27[2][]",
    "bytes17,(uint248,bytes1,uint160[3]),uint184",
    "uint96,bytes13,(uint112,bytes8,int8[],bytes18[]),uint168,uint16",
    "bytes12[],string[],(int248[1]),int104[],(bytes5,int232,uint192[1],int192)",
    "(uint96,int200),int56[][]",
    "int8[2],(int128[],uint120),int168",
    "uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[])",
    "(uint120[])[]",
    "(bytes26[],uint8,bytes4[2])[3]",
    "bytes16[],(string[],string)",
    "bytes,int64,(bytes,uint64)[3][]",
    "bytes,uint32,((uint24,string,uint248)[]),uint184,bytes16,int232",
    "(bytes12[][],(bytes20,string)),(uint200,bytes16,int48[2][])",
    "int16,(string[2],uint80)[3],int88,(uint136,uint240,int160,bytes2)[3][]",
    "bytes7[3][2][]",
    "bytes25,address[],(uint40[])[]",
    "uint40,uint184,(uint32,(int144[],address[],(uint128,bytes13),bytes[1]),(bytes17[1],bytes19,uint144),uint32),"
    "int104,bytes24[2],int8",
    "(int232[1],int192[],int104,bytes22[1])[],bytes6,bytes4,int40,uint120[2],(bytes8,(bool,bytes18,uint32,bytes23),"
    "int16[1],uint184)[1]",
    "bytes7,uint48,uint152,int168,bytes1[],((uint24,(int136,string,int32,uint104),uint208),((uint192,int88,int64),"
    "uint136[],int104),bytes17[3],uint248)",
    "bytes6,(int184)[],int232,string[]",
    "int48,int128,uint208,(string[],uint248[2],int176)[3],bytes22,bytes10",
    "(uint248,(int112)),uint256,int240[],((bytes10,bytes8)[3],uint16,int200)",
    "uint8[],int240[3][2][],int72[2]",
    "bool[][],address[2][]",
    "(string,bytes)[][2]",
};
// END abi type table

const std::vector<std::vector<codec::abi::type>>& parsed_table() {
  static const auto table = [] {
    std::vector<std::vector<codec::abi::type>> out;
    for (const char* list : kTypeLists)
      out.push_back(codec::abi::parse_signature(std::string("f(") + list + ")").value().inputs);
    return out;
  }();
  return table;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const auto& types = parsed_table()[data[0] % kTypeLists.size()];
  const bytes_view in = fuzz::view(data + 1, size - 1);
  const auto values = codec::abi::decode(types, in);
  if (!values) {
    fuzz::require(values.code().category() == make_error_code(abi_errc::bad_type).category(),
                  "abi: error outside abi_errc");
    return 0;
  }
  fuzz::require(values->size() == types.size(), "abi: value count");
  const auto encoded = codec::abi::encode(types, *values);
  fuzz::require(encoded.has_value(), "abi: decoded values do not encode");
  const auto again = codec::abi::decode(types, *encoded);
  fuzz::require(again && *again == *values, "abi: decode(encode(values)) != values");
  // A canonical encoding decodes and re-encodes to itself.
  fuzz::require(codec::abi::encode(types, *again).value() == *encoded, "abi: encoding not stable");
  for (size_t i = 0; i < types.size(); ++i) {
    const auto json = codec::abi::to_json(types[i], (*values)[i]);
    const auto back = codec::abi::from_json(types[i], json);
    fuzz::require(back && *back == (*values)[i], "abi: from_json(to_json(v)) != v");
  }
  return 0;
}
