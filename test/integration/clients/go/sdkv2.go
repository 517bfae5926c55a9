package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// walkV2 is the main walk, through SDK v2: queues (standard and FIFO), then a topic fanning out into two queues.
func walkV2(endpoint, prefix string) {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	must(err, "v2 LoadDefaultConfig")
	// SDK v2 1.17 predates BaseEndpoint: each client takes an endpoint resolver.
	sqsClient := sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		o.EndpointResolver = sqs.EndpointResolverFromURL(endpoint)
	})
	snsClient := sns.NewFromConfig(cfg, func(o *sns.Options) {
		o.EndpointResolver = sns.EndpointResolverFromURL(endpoint)
	})
	walkV2Queue(ctx, sqsClient, prefix)
	walkV2Fifo(ctx, sqsClient, prefix)
	walkV2Topic(ctx, snsClient, sqsClient, prefix)
}

func stringAttribute(value string) sqstypes.MessageAttributeValue {
	return sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(value)}
}

func receiveV2(ctx context.Context, client *sqs.Client, queueURL string, want int) []sqstypes.Message {
	var messages []sqstypes.Message
	for len(messages) < want {
		received, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:              aws.String(queueURL),
			MaxNumberOfMessages:   10,
			WaitTimeSeconds:       1,
			AttributeNames:        []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
			MessageAttributeNames: []string{"All"},
		})
		must(err, "v2 ReceiveMessage")
		if len(received.Messages) == 0 {
			break
		}
		messages = append(messages, received.Messages...)
	}
	expectEqual("v2 number of messages received from "+queueURL, len(messages), want)
	return messages
}

func queueArnV2(ctx context.Context, client *sqs.Client, queueURL string) string {
	attributes, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	must(err, "v2 GetQueueAttributes QueueArn")
	return attributes.Attributes["QueueArn"]
}

func apiErrorCode(err error) string {
	var apiError smithy.APIError
	if errors.As(err, &apiError) {
		return apiError.ErrorCode()
	}
	return ""
}

func walkV2Queue(ctx context.Context, client *sqs.Client, prefix string) {
	name := prefix + "-orders"
	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String(name),
		Attributes: map[string]string{"VisibilityTimeout": "60"},
	})
	must(err, "v2 CreateQueue")
	queueURL := aws.ToString(created.QueueUrl)
	expect(strings.HasSuffix(queueURL, "/"+name), "v2 CreateQueue QueueUrl ends with the name", queueURL)
	ok("v2 CreateQueue %s", queueURL)

	body := "order 42 \u2713 <&>"
	attributes := map[string]sqstypes.MessageAttributeValue{
		"kind":  stringAttribute("order"),
		"total": {DataType: aws.String("Number"), StringValue: aws.String("250.5")},
		"blob":  {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 255}},
	}
	// The SDK itself checks MD5OfMessageBody and MD5OfMessageAttributes of SendMessage and ReceiveMessage.
	sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:          aws.String(queueURL),
		MessageBody:       aws.String(body),
		MessageAttributes: attributes,
	})
	must(err, "v2 SendMessage")
	bodyMD5 := md5.Sum([]byte(body))
	expectEqual("v2 SendMessage MD5OfMessageBody", aws.ToString(sent.MD5OfMessageBody), hex.EncodeToString(bodyMD5[:]))
	expect(sent.MD5OfMessageAttributes != nil, "v2 SendMessage MD5OfMessageAttributes", sent.MD5OfMessageAttributes)
	ok("v2 SendMessage %s with String, Number and Binary attributes", aws.ToString(sent.MessageId))

	message := receiveV2(ctx, client, queueURL, 1)[0]
	expectEqual("v2 ReceiveMessage MessageId", aws.ToString(message.MessageId), aws.ToString(sent.MessageId))
	expectEqual("v2 ReceiveMessage Body", aws.ToString(message.Body), body)
	for name, sentValue := range attributes {
		got := message.MessageAttributes[name]
		expectEqual("v2 ReceiveMessage attribute "+name+" DataType", aws.ToString(got.DataType), aws.ToString(sentValue.DataType))
		expectEqual("v2 ReceiveMessage attribute "+name+" StringValue", aws.ToString(got.StringValue), aws.ToString(sentValue.StringValue))
		expectEqual("v2 ReceiveMessage attribute "+name+" BinaryValue", got.BinaryValue, sentValue.BinaryValue)
	}
	expectEqual("v2 ReceiveMessage ApproximateReceiveCount", message.Attributes["ApproximateReceiveCount"], "1")
	expect(message.Attributes["SentTimestamp"] != "", "v2 ReceiveMessage SentTimestamp", message.Attributes)
	ok("v2 ReceiveMessage: body, attributes and system attributes as sent")

	_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: message.ReceiptHandle})
	must(err, "v2 DeleteMessage")
	queue, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
	})
	must(err, "v2 GetQueueAttributes")
	expectEqual("v2 GetQueueAttributes VisibilityTimeout", queue.Attributes["VisibilityTimeout"], "60")
	expectEqual("v2 GetQueueAttributes ApproximateNumberOfMessages", queue.Attributes["ApproximateNumberOfMessages"], "0")
	expectEqual("v2 GetQueueAttributes ApproximateNumberOfMessagesNotVisible", queue.Attributes["ApproximateNumberOfMessagesNotVisible"], "0")
	expect(strings.HasPrefix(queue.Attributes["QueueArn"], "arn:aws:sqs:") && strings.HasSuffix(queue.Attributes["QueueArn"], ":"+name),
		"v2 GetQueueAttributes QueueArn", queue.Attributes["QueueArn"])
	ok("v2 DeleteMessage, then GetQueueAttributes: nothing left, %s", queue.Attributes["QueueArn"])

	_, err = client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(prefix + "-missing")})
	expectEqual("v2 GetQueueUrl of a missing queue: error code", apiErrorCode(err), "AWS.SimpleQueueService.NonExistentQueue")
	var doesNotExist *sqstypes.QueueDoesNotExist
	expect(errors.As(err, &doesNotExist), "v2 the missing queue's error as *types.QueueDoesNotExist", err)
	ok("v2 GetQueueUrl of a missing queue: %v", err)

	_, err = client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(queueURL)})
	must(err, "v2 DeleteQueue")
}

func walkV2Fifo(ctx context.Context, client *sqs.Client, prefix string) {
	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String(prefix + "-ledger.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"},
	})
	must(err, "v2 CreateQueue FIFO")
	queueURL := aws.ToString(created.QueueUrl)
	bodies := []string{"first", "second", "third", "first"}
	var sequenceNumbers []string
	var messageIDs []string
	for _, body := range bodies {
		sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl:       aws.String(queueURL),
			MessageBody:    aws.String(body),
			MessageGroupId: aws.String("g1"),
		})
		must(err, "v2 SendMessage FIFO")
		sequenceNumbers = append(sequenceNumbers, aws.ToString(sent.SequenceNumber))
		messageIDs = append(messageIDs, aws.ToString(sent.MessageId))
	}
	for i := 1; i < 3; i++ {
		previous, _ := new(big.Int).SetString(sequenceNumbers[i-1], 10)
		current, parsed := new(big.Int).SetString(sequenceNumbers[i], 10)
		expect(parsed && previous != nil && current.Cmp(previous) > 0, "v2 FIFO SequenceNumbers increase", sequenceNumbers)
	}
	// The fourth send repeats the first body within the deduplication interval: accepted, not enqueued.
	expectEqual("v2 FIFO duplicate send's MessageId", messageIDs[3], messageIDs[0])
	ok("v2 FIFO SendMessage x4 (one duplicate by content): sequence numbers %v", sequenceNumbers[:3])

	received := receiveV2(ctx, client, queueURL, 3)
	entries := make([]sqstypes.DeleteMessageBatchRequestEntry, len(received))
	for i, message := range received {
		expectEqual("v2 FIFO order", aws.ToString(message.Body), bodies[i])
		expectEqual("v2 FIFO MessageGroupId", message.Attributes["MessageGroupId"], "g1")
		expectEqual("v2 FIFO SequenceNumber", message.Attributes["SequenceNumber"], sequenceNumbers[i])
		digest := sha256.Sum256([]byte(bodies[i]))
		expectEqual("v2 FIFO content-based MessageDeduplicationId", message.Attributes["MessageDeduplicationId"], hex.EncodeToString(digest[:]))
		entries[i] = sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(string(rune('a' + i))), ReceiptHandle: message.ReceiptHandle}
	}
	ok("v2 FIFO ReceiveMessage: 3 messages in order, group, sequence numbers, content-based deduplication ids")

	deleted, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
	must(err, "v2 DeleteMessageBatch")
	expectEqual("v2 DeleteMessageBatch Successful", len(deleted.Successful), 3)
	expectEqual("v2 DeleteMessageBatch Failed", len(deleted.Failed), 0)
	attributes, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
	})
	must(err, "v2 GetQueueAttributes FIFO")
	expectEqual("v2 FIFO FifoQueue", attributes.Attributes["FifoQueue"], "true")
	expectEqual("v2 FIFO ContentBasedDeduplication", attributes.Attributes["ContentBasedDeduplication"], "true")
	expectEqual("v2 FIFO ApproximateNumberOfMessages", attributes.Attributes["ApproximateNumberOfMessages"], "0")
	ok("v2 DeleteMessageBatch and FIFO GetQueueAttributes")
	_, err = client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(queueURL)})
	must(err, "v2 DeleteQueue FIFO")
}

func snsAttribute(dataType, value string) snstypes.MessageAttributeValue {
	return snstypes.MessageAttributeValue{DataType: aws.String(dataType), StringValue: aws.String(value)}
}

func walkV2Topic(ctx context.Context, client *sns.Client, sqsClient *sqs.Client, prefix string) {
	topicName := prefix + "-events"
	created, err := client.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(topicName)})
	must(err, "v2 CreateTopic")
	topicArn := aws.ToString(created.TopicArn)
	expect(strings.HasPrefix(topicArn, "arn:aws:sns:") && strings.HasSuffix(topicArn, ":"+topicName), "v2 CreateTopic TopicArn", topicArn)
	ok("v2 CreateTopic %s", topicArn)

	queues := map[string]string{}
	for _, kind := range []string{"raw", "envelope"} {
		queue, err := sqsClient.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-" + kind)})
		must(err, "v2 CreateQueue for a subscription")
		queues[kind] = aws.ToString(queue.QueueUrl)
	}
	rawArn, envelopeArn := queueArnV2(ctx, sqsClient, queues["raw"]), queueArnV2(ctx, sqsClient, queues["envelope"])
	filterPolicy := `{"kind":["order"]}`
	raw, err := client.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"), Endpoint: aws.String(rawArn),
		Attributes:            map[string]string{"RawMessageDelivery": "true", "FilterPolicy": filterPolicy},
		ReturnSubscriptionArn: true,
	})
	must(err, "v2 Subscribe raw")
	envelope, err := client.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"), Endpoint: aws.String(envelopeArn),
		ReturnSubscriptionArn: true,
	})
	must(err, "v2 Subscribe envelope")
	rawSubscription, envelopeSubscription := aws.ToString(raw.SubscriptionArn), aws.ToString(envelope.SubscriptionArn)
	for _, arn := range []string{rawSubscription, envelopeSubscription} {
		expect(strings.HasPrefix(arn, topicArn+":"), "v2 Subscribe SubscriptionArn under the topic", arn)
	}
	subscriptionAttributes, err := client.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: raw.SubscriptionArn})
	must(err, "v2 GetSubscriptionAttributes")
	expectEqual("v2 raw subscription RawMessageDelivery", subscriptionAttributes.Attributes["RawMessageDelivery"], "true")
	expectEqual("v2 raw subscription FilterPolicy", subscriptionAttributes.Attributes["FilterPolicy"], filterPolicy)
	ok("v2 Subscribe: %s raw with filter %s, %s with the envelope", rawSubscription, filterPolicy, envelopeSubscription)

	order, err := client.Publish(ctx, &sns.PublishInput{
		TopicArn: aws.String(topicArn), Message: aws.String("order 7"), Subject: aws.String("new order"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"kind":  snsAttribute("String", "order"),
			"total": snsAttribute("Number", "99"),
		},
	})
	must(err, "v2 Publish order")
	refund, err := client.Publish(ctx, &sns.PublishInput{
		TopicArn: aws.String(topicArn), Message: aws.String("refund 7"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": snsAttribute("String", "refund")},
	})
	must(err, "v2 Publish refund")
	ok("v2 Publish %s (kind=order) and %s (kind=refund)", aws.ToString(order.MessageId), aws.ToString(refund.MessageId))
	batch, err := client.PublishBatch(ctx, &sns.PublishBatchInput{
		TopicArn: aws.String(topicArn),
		PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
			{Id: aws.String("a"), Message: aws.String("batched order"), MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": snsAttribute("String", "order")}},
			{Id: aws.String("b"), Message: aws.String("batched refund"), MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": snsAttribute("String", "refund")}},
		},
	})
	must(err, "v2 PublishBatch")
	expectEqual("v2 PublishBatch Failed", len(batch.Failed), 0)
	batchIDs := map[string]string{}
	for _, entry := range batch.Successful {
		batchIDs[aws.ToString(entry.Id)] = aws.ToString(entry.MessageId)
	}
	expect(len(batchIDs) == 2 && batchIDs["a"] != "" && batchIDs["b"] != "", "v2 PublishBatch Successful ids a and b", batch.Successful)
	ok("v2 PublishBatch: a=%s b=%s", batchIDs["a"], batchIDs["b"])

	listed, err := client.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topicArn)})
	must(err, "v2 ListSubscriptionsByTopic")
	var endpoints []string
	for _, subscription := range listed.Subscriptions {
		expectEqual("v2 listed subscription Protocol", aws.ToString(subscription.Protocol), "sqs")
		expectEqual("v2 listed subscription TopicArn", aws.ToString(subscription.TopicArn), topicArn)
		endpoints = append(endpoints, aws.ToString(subscription.Endpoint)+" "+aws.ToString(subscription.SubscriptionArn))
	}
	sort.Strings(endpoints)
	want := []string{rawArn + " " + rawSubscription, envelopeArn + " " + envelopeSubscription}
	sort.Strings(want)
	expectEqual("v2 ListSubscriptionsByTopic endpoints and ARNs", endpoints, want)
	ok("v2 ListSubscriptionsByTopic: both subscriptions")

	// The raw queue gets only kind=order, the body as published and the attributes as SQS message attributes.
	rawBodies := map[string]sqstypes.Message{}
	for _, message := range receiveV2(ctx, sqsClient, queues["raw"], 2) {
		rawBodies[aws.ToString(message.Body)] = message
	}
	first, present := rawBodies["order 7"]
	expect(present && rawBodies["batched order"].Body != nil, "v2 raw deliveries: the two orders", rawBodies)
	expectEqual("v2 raw delivery kind attribute", aws.ToString(first.MessageAttributes["kind"].StringValue), "order")
	expectEqual("v2 raw delivery total attribute", aws.ToString(first.MessageAttributes["total"].DataType)+" "+aws.ToString(first.MessageAttributes["total"].StringValue), "Number 99")
	ok("v2 raw queue: the two kind=order messages, attributes kept; the refunds were filtered out")

	envelopes := map[string]map[string]any{}
	var orderBody string
	for _, message := range receiveV2(ctx, sqsClient, queues["envelope"], 4) {
		var parsed map[string]any
		must(json.Unmarshal([]byte(aws.ToString(message.Body)), &parsed), "v2 parsing an SNS envelope")
		envelopes[parsed["MessageId"].(string)] = parsed
		if parsed["MessageId"] == aws.ToString(order.MessageId) {
			orderBody = aws.ToString(message.Body)
		}
	}
	for _, id := range []string{aws.ToString(refund.MessageId), batchIDs["a"], batchIDs["b"]} {
		expect(envelopes[id] != nil, "v2 an envelope for message "+id, envelopes)
	}
	expectEqual("v2 envelope keys in order", envelopeOrder(orderBody), envelopeFields)
	notification := envelopes[aws.ToString(order.MessageId)]
	expectEqual("v2 envelope Type", notification["Type"], any("Notification"))
	expectEqual("v2 envelope TopicArn", notification["TopicArn"], any(topicArn))
	expectEqual("v2 envelope Subject", notification["Subject"], any("new order"))
	expectEqual("v2 envelope Message", notification["Message"], any("order 7"))
	_, err = time.Parse("2006-01-02T15:04:05.000Z", notification["Timestamp"].(string))
	must(err, "v2 envelope Timestamp in AWS's format")
	expectEqual("v2 envelope MessageAttributes", notification["MessageAttributes"], any(map[string]any{
		"kind":  map[string]any{"Type": "String", "Value": "order"},
		"total": map[string]any{"Type": "Number", "Value": "99"},
	}))
	unsubscribe, err := url.Parse(notification["UnsubscribeURL"].(string))
	must(err, "v2 envelope UnsubscribeURL")
	expectEqual("v2 envelope UnsubscribeURL Action", unsubscribe.Query().Get("Action"), "Unsubscribe")
	expectEqual("v2 envelope UnsubscribeURL SubscriptionArn", unsubscribe.Query().Get("SubscriptionArn"), envelopeSubscription)
	verifyEnvelope(notification)
	ok("v2 envelope queue: all four publications, fields in AWS's order and values")

	_, err = client.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: raw.SubscriptionArn})
	must(err, "v2 Unsubscribe")
	_, err = client.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(topicArn)})
	must(err, "v2 DeleteTopic")
	_, err = client.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(topicArn)})
	expectEqual("v2 GetTopicAttributes of the deleted topic: error code", apiErrorCode(err), "NotFound")
	var notFound *snstypes.NotFoundException
	expect(errors.As(err, &notFound), "v2 the deleted topic's error as *types.NotFoundException", err)
	ok("v2 Unsubscribe, DeleteTopic; the topic is gone: %v", err)
	for _, queueURL := range queues {
		_, err = sqsClient.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(queueURL)})
		must(err, "v2 DeleteQueue")
	}
}
