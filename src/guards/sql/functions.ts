import type { SqlDialect } from './policy.js';

/**
 * The functions a read-only query may call by default: pure computations on the values the query
 * reads (aggregates, window functions, strings, numbers, dates, JSON, arrays). Nothing here writes,
 * takes a lock, sleeps, reads a file, runs a query given as text or changes a setting.
 */
const COMMON = [
  // aggregates and window functions
  'count', 'sum', 'avg', 'min', 'max', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp',
  'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value',
  // conditionals
  'coalesce', 'nullif', 'greatest', 'least',
  // strings
  'lower', 'upper', 'length', 'char_length', 'character_length', 'octet_length', 'substr', 'substring', 'trim', 'ltrim', 'rtrim',
  'replace', 'concat', 'concat_ws', 'left', 'right', 'lpad', 'rpad', 'reverse', 'repeat', 'position', 'instr', 'format', 'ascii',
  'md5', 'regexp_replace', 'regexp_substr', 'regexp_like', 'regexp_instr',
  // numbers
  'abs', 'round', 'floor', 'ceil', 'ceiling', 'mod', 'power', 'pow', 'sqrt', 'exp', 'ln', 'log', 'log10', 'sign', 'pi',
  'degrees', 'radians', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'random',
  // dates
  'now', 'current_date', 'current_time', 'current_timestamp', 'localtime', 'localtimestamp', 'extract',
  // SQL-syntax forms some parsers report as calls
  'exists', 'cast',
];

const POSTGRES = [
  'string_agg', 'array_agg', 'json_agg', 'jsonb_agg', 'json_object_agg', 'jsonb_object_agg', 'bool_and', 'bool_or', 'every',
  'bit_and', 'bit_or', 'bit_xor', 'corr', 'covar_pop', 'covar_samp', 'regr_slope', 'regr_intercept', 'regr_count', 'regr_r2',
  'regr_avgx', 'regr_avgy', 'regr_sxx', 'regr_syy', 'regr_sxy', 'percentile_cont', 'percentile_disc', 'mode', 'any_value',
  'initcap', 'bit_length', 'btrim', 'split_part', 'strpos', 'starts_with', 'translate', 'chr', 'to_hex', 'overlay',
  'normalize', 'is_normalized', 'casefold', 'quote_ident', 'quote_literal', 'quote_nullable', 'sha224', 'sha256', 'sha384',
  'sha512', 'encode', 'decode', 'regexp_match', 'regexp_matches', 'regexp_split_to_array', 'regexp_split_to_table', 'regexp_count',
  'string_to_array', 'array_to_string', 'similar_to_escape', 'like_escape', 'pg_collation_for',
  'trunc', 'cbrt', 'div', 'gcd', 'lcm', 'width_bucket', 'scale', 'min_scale', 'trim_scale',
  'clock_timestamp', 'statement_timestamp', 'transaction_timestamp', 'date_trunc', 'date_part', 'date_bin', 'age', 'to_char',
  'to_date', 'to_timestamp', 'to_number', 'make_date', 'make_time', 'make_timestamp', 'make_timestamptz', 'make_interval',
  'justify_days', 'justify_hours', 'justify_interval', 'isfinite', 'timezone', 'overlaps', 'date_add', 'date_subtract',
  'json_build_object', 'jsonb_build_object', 'json_build_array', 'jsonb_build_array', 'to_json', 'to_jsonb', 'json_object',
  'jsonb_object', 'row_to_json', 'array_to_json', 'json_array_length', 'jsonb_array_length', 'json_extract_path',
  'json_extract_path_text', 'jsonb_extract_path', 'jsonb_extract_path_text', 'json_typeof', 'jsonb_typeof', 'json_each',
  'json_each_text', 'jsonb_each', 'jsonb_each_text', 'json_array_elements', 'json_array_elements_text', 'jsonb_array_elements',
  'jsonb_array_elements_text', 'json_object_keys', 'jsonb_object_keys', 'jsonb_set', 'jsonb_insert', 'jsonb_strip_nulls',
  'json_strip_nulls', 'jsonb_pretty', 'jsonb_path_query', 'jsonb_path_exists', 'jsonb_path_match', 'jsonb_path_query_array',
  'jsonb_path_query_first', 'json_to_record', 'jsonb_to_record', 'json_to_recordset', 'jsonb_to_recordset',
  'array_length', 'cardinality', 'unnest', 'array_position', 'array_positions', 'array_append', 'array_prepend', 'array_cat',
  'array_remove', 'array_replace', 'array_dims', 'array_lower', 'array_upper', 'array_ndims', 'array_fill', 'trim_array',
  'array_reverse', 'array_sort', 'generate_series', 'generate_subscripts',
  'to_tsvector', 'to_tsquery', 'plainto_tsquery', 'phraseto_tsquery', 'websearch_to_tsquery', 'ts_rank', 'ts_rank_cd',
  'ts_headline', 'setweight', 'tsvector_to_array', 'numnode', 'querytree', 'strip',
  'isempty', 'lower_inc', 'upper_inc', 'lower_inf', 'upper_inf', 'range_merge', 'int4range', 'int8range', 'numrange', 'tsrange',
  'tstzrange', 'daterange',
  'pg_typeof', 'num_nonnulls', 'num_nulls', 'gen_random_uuid', 'current_database', 'current_schema',
];

const MYSQL = [
  'group_concat', 'json_arrayagg', 'json_objectagg', 'bit_and', 'bit_or', 'bit_xor', 'std',
  'lcase', 'ucase', 'substring_index', 'mid', 'locate', 'field', 'find_in_set', 'hex', 'unhex', 'sha1', 'sha', 'sha2',
  'to_base64', 'from_base64', 'space', 'strcmp', 'soundex', 'elt', 'ord', 'char', 'quote', 'convert',
  'ifnull', 'if', 'isnull', 'truncate', 'log2', 'cot', 'rand', 'crc32', 'conv', 'bin', 'oct',
  'curdate', 'curtime', 'sysdate', 'utc_date', 'utc_time', 'utc_timestamp', 'date', 'time', 'year', 'month', 'day',
  'dayofmonth', 'dayofweek', 'dayofyear', 'dayname', 'monthname', 'hour', 'minute', 'second', 'microsecond', 'week',
  'weekday', 'weekofyear', 'yearweek', 'quarter', 'last_day', 'date_format', 'time_format', 'str_to_date', 'date_add',
  'date_sub', 'adddate', 'subdate', 'addtime', 'subtime', 'datediff', 'timediff', 'timestampdiff', 'timestampadd',
  'from_unixtime', 'unix_timestamp', 'to_days', 'from_days', 'to_seconds', 'makedate', 'maketime', 'period_add',
  'period_diff', 'sec_to_time', 'time_to_sec', 'convert_tz', 'get_format',
  'json_extract', 'json_unquote', 'json_object', 'json_array', 'json_contains', 'json_contains_path', 'json_keys',
  'json_length', 'json_type', 'json_valid', 'json_search', 'json_depth', 'json_quote', 'json_merge_patch',
  'json_merge_preserve', 'json_set', 'json_insert', 'json_replace', 'json_remove', 'json_array_append', 'json_array_insert',
  'json_pretty', 'json_overlaps', 'json_value', 'uuid', 'bin_to_uuid', 'uuid_to_bin', 'inet_aton', 'inet_ntoa',
  'inet6_aton', 'inet6_ntoa',
];

const SQLITE = [
  'total', 'group_concat', 'string_agg', 'json_group_array', 'json_group_object', 'jsonb_group_array', 'jsonb_group_object',
  'unicode', 'hex', 'unhex', 'quote', 'char', 'like', 'glob', 'printf', 'ifnull', 'iif', 'if', 'typeof', 'trunc', 'log2',
  'randomblob', 'zeroblob', 'date', 'time', 'datetime', 'julianday', 'unixepoch', 'strftime', 'timediff',
  'json', 'jsonb', 'json_array', 'jsonb_array', 'json_array_length', 'json_extract', 'jsonb_extract', 'json_insert',
  'jsonb_insert', 'json_object', 'jsonb_object', 'json_patch', 'jsonb_patch', 'json_remove', 'jsonb_remove', 'json_replace',
  'jsonb_replace', 'json_set', 'jsonb_set', 'json_type', 'json_valid', 'json_quote', 'json_each', 'json_tree',
  'json_error_position', 'json_pretty', 'likely', 'unlikely', 'likelihood',
];

export const DEFAULT_FUNCTIONS: Readonly<Record<SqlDialect, ReadonlySet<string>>> = {
  postgres: new Set([...COMMON, ...POSTGRES]),
  mysql: new Set([...COMMON, ...MYSQL]),
  sqlite: new Set([...COMMON, ...SQLITE]),
};

/**
 * Families that are never on the default list, named so a refusal can say why. An operator may
 * still allow one by its exact name in allowFunctions.
 */
export const DANGEROUS: readonly { readonly test: RegExp; readonly why: string }[] = [
  { test: /^(lo_\w+|pg_read_file|pg_read_binary_file|pg_ls_\w+|pg_stat_file|pg_file_\w+|load_file|readfile|writefile|edit|fsdir|zipfile)$/, why: 'it reads or writes files or large objects on the server' },
  { test: /^(nextval|setval|currval|lastval|set_config|setseed|txid_current\w*|pg_current_xact_id\w*|pg_notify|last_insert_id)$/, why: 'it changes sequences, settings or transaction state' },
  { test: /^(pg_advisory\w*|pg_try_advisory\w*|get_lock|release_lock|release_all_locks|is_free_lock|is_used_lock)$/, why: 'it takes or releases a lock' },
  { test: /^(pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile|pg_switch_wal|pg_promote|pg_create_restore_point|pg_log_backend_memory_contexts|pg_stat_reset\w*|pg_\w*replication\w*|pg_logical_\w+)$/, why: 'it acts on the server itself' },
  { test: /^(dblink\w*|ts_stat|query_to_xml\w*|table_to_xml\w*|cursor_to_xml\w*|schema_to_xml\w*|database_to_xml\w*|load_extension|fts3_tokenizer|sys_exec|sys_eval)$/, why: 'it runs other SQL or code, or reaches another server' },
  { test: /^(pg_sleep\w*|sleep|benchmark|master_pos_wait|source_pos_wait|wait_for_executed_gtid_set|wait_until_sql_thread_after_gtids)$/, why: 'it makes the query wait' },
];

export function dangerReason(name: string): string | undefined {
  return DANGEROUS.find((d) => d.test.test(name))?.why;
}
