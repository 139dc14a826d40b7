// Package backend speaks the inference servers' streaming APIs: it builds
// the request body for each API, streams the answer, timestamps every
// content-bearing chunk as its bytes are read, takes token counts and
// server timings from the server's own report, and classifies failures.
// Each request becomes one record.Record; failures are data in it, never
// returned errors.
//
// # Instants
//
// All are read from the monotonic clock; the record holds them as ns since
// the run's epoch, chunk times as ns since SentNS.
//
//   - SentNS: when the transport hands over a connection, immediately
//     before the request is written (a fresh connection's dial and TLS
//     handshake come before it).
//   - A chunk's time: when the Read that delivered its last byte returned,
//     before the chunk is parsed. Only content-bearing chunks count: those
//     with non-empty answer text (delta.content, text, message.content,
//     response; llama.cpp's content, TGI's token.text unless the token is
//     special, what SGLang's text adds to the text before) or reasoning
//     text (delta.reasoning_content, delta.reasoning, message.thinking,
//     thinking). Role-only chunks, empty deltas, usage-only chunks and
//     end markers are not tokens.
//   - FirstTokenNS: the first content-bearing chunk, reasoning or answer.
//     A stream that ends without one (the end marker first, an empty
//     body) has none and is a failure of class empty_stream.
//   - FirstOutputNS: the first chunk with answer text.
//   - EndNS: when the end marker ([DONE]; Ollama's "done": true;
//     llama.cpp /completion's "stop": true; TGI's generated_text) was
//     read, or when the failure was seen.
//
// # Token counts
//
// Output tokens: the server's usage report (usage.completion_tokens,
// Ollama eval_count, llama.cpp tokens_predicted, TGI generated_tokens,
// SGLang completion_tokens) when given, source "usage"; else the local tokenizer
// over the whole streamed text, "local_tokenizer"; else one per
// content-bearing chunk, "chunks". A usage report of 0 output tokens for a
// stream that carried text is ignored as bogus. Prompt tokens come only
// from usage (usage.prompt_tokens, prompt_eval_count, tokens_evaluated,
// input_length, meta_info.prompt_tokens); otherwise they stay
// 0 with source "", for the caller to fill.
//
// Tokens per chunk: the total is spread over the content-bearing chunks.
// If the server reported reasoning tokens R
// (completion_tokens_details.reasoning_tokens) with 0 <= R <= total and
// both reasoning and answer chunks were streamed, R is spread over the reasoning chunks and total-R
// over the answer chunks; otherwise the total is spread over all chunks.
// Within a group of n chunks and a total T: if T == n each chunk carries
// 1. Otherwise chunk i gets weight w_i = max(1, local tokenizer count of
// its text), or 1 when there is no local tokenizer; its share is
// floor(T*w_i/W) (W = sum of weights), and the T - sum(floors) leftover
// tokens go one each to the chunks with the largest remainders T*w_i mod W
// (the earlier chunk first on ties). Shares sum exactly to T; a chunk may
// carry 0 when T < n.
//
// Reasoning tokens: R when reported, else the sum over reasoning chunks.
package backend
