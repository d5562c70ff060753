import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Gateway } from '../gateway.js';
import { parseBatch } from '../batch/detect.js';
import { runBatch } from '../batch/run.js';
import { AnthropicAnswer, BatchBody, GenericAnswer, OpenAIAnswer, ResponsesAnswer } from '../batch/schemas.js';
import { errorResponses } from './schemas.js';

/**
 * POST /v1/calls: a model's tool calls exactly as it emitted them (OpenAI, Responses, Anthropic or
 * generic), each run through the pipeline as the caller, answered in the same dialect and order.
 */
export async function batchRoutes(app: FastifyInstance, opts: { gw: Gateway }): Promise<void> {
  const { gw } = opts;
  app.post(
    '/v1/calls',
    {
      schema: {
        summary: 'Run a batch of tool calls in the client\'s own format; answers in that format, ready to append to the conversation',
        tags: ['calls'],
        body: BatchBody,
        response: {
          200: Type.Union([OpenAIAnswer, ResponsesAnswer, AnthropicAnswer, GenericAnswer]),
          ...errorResponses(400, 401, 413),
        },
      },
      // The body schema documents the dialects; parseBatch checks them, with messages that name the dialect and the entry.
      validatorCompiler: () => () => true,
    },
    async (req) => {
      const { limits } = gw.config;
      const batch = parseBatch(req.body, limits.batchMaxCalls);
      const ac = new AbortController();
      const onClose = () => {
        if (!req.raw.complete || req.raw.socket.destroyed) ac.abort();
      };
      req.raw.socket.once('close', onClose);
      try {
        const outcomes = await runBatch(
          gw.pipeline,
          batch.entries,
          { caller: req.caller, requestId: req.id, sessionId: batch.sessionId, headers: req.headers, signal: ac.signal },
          limits.batchConcurrency,
        );
        return batch.dialect.format(batch.entries, outcomes, { registry: gw.registry });
      } finally {
        req.raw.socket.off('close', onClose);
      }
    },
  );
}
