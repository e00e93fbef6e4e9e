"""Constants shared by the loaders' numba kernels and their Python wrappers, in a
module without numba so that importing a loader does not import numba."""

# attribute kinds
KIND_NUMERIC = 0
KIND_NOMINAL = 1
KIND_SKIP = 2  # string/date/dropped attributes: the token is read and ignored

# error codes (see mlw.io.arff._ERRORS for the messages)
ERR_OK = 0
ERR_NUMBER = 1
ERR_NOMINAL = 2
ERR_TOO_FEW = 3
ERR_TOO_MANY = 4
ERR_SPARSE_INDEX = 5
ERR_INDEX_RANGE = 6
ERR_DUPLICATE = 7
ERR_QUOTE = 8
ERR_SPARSE_SYNTAX = 9
ERR_EMPTY = 10
ERR_TRAILING = 11
ERR_LABEL_MISSING = 12
ERR_LABEL_VALUE = 13
ERR_ROW_COUNT = 14
ERR_XC_SYNTAX = 15

# number parse results
NUM_OK = 0
NUM_FALLBACK = 1
NUM_BAD = 2

# roles of the attributes in the expansion to feature and label columns
ROLE_DROP = 0
ROLE_COPY = 1        # numeric, or binary nominal whose second value is 1: value as is
ROLE_INVERT = 2      # binary nominal whose FIRST value is 1: absent/0 -> 1, 1 -> 0
ROLE_ONEHOT = 3      # nominal with k >= 3 values: k 0/1 columns
ROLE_LABEL_NOM = 4   # label, binary nominal; one_code says which code is 1
ROLE_LABEL_NUM = 5   # label, numeric: the value must be 0 or 1

# the nominal values' hash (FNV-1a over the value's bytes, seeded with the attribute):
# mlw.io.arff.nominal_table builds the table, the tokeniser looks values up in it
FNV_OFFSET = 14695981039346656037
FNV_PRIME = 1099511628211
GOLDEN = 0x9E3779B97F4A7C15
